// shmguard-cri: the few CRI calls the tests make of containerd, as a kubelet makes them (crictl is
// not in Debian 12). Built by build-cri-tools.sh in GOPATH mode inside Debian 12's kubernetes
// source tree, against its vendored k8s.io/cri-api (runtime v1alpha2, the version kubelet 1.20
// speaks) and google.golang.org/grpc. Requests are read as JSON files in the shape of the Go
// types (the proto's field names, enums as numbers); answers are printed as JSON.
//
//	shmguard-cri -a SOCKET version
//	shmguard-cri -a SOCKET runp POD.json                  -> the sandbox id
//	shmguard-cri -a SOCKET create POD-ID CONTAINER.json POD.json -> the container id
//	shmguard-cri -a SOCKET start|rm ID ; stop ID SECONDS ; stopp|rmp POD-ID
//	shmguard-cri -a SOCKET inspect ID ; inspectp POD-ID   -> status and verbose info as JSON
//	shmguard-cri -a SOCKET image REF                      -> the image's status as JSON
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"net"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1alpha2"
)

func main() {
	address := flag.String("a", "", "containerd's socket")
	timeout := flag.Duration("t", 2*time.Minute, "how long one call may take")
	flag.Parse()
	args := flag.Args()
	if *address == "" || len(args) == 0 {
		fail(fmt.Errorf("usage: shmguard-cri -a SOCKET VERB ARGS..."))
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conn, err := grpc.DialContext(ctx, *address, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}))
	if err != nil {
		fail(err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	images := runtimeapi.NewImageServiceClient(conn)
	if err := run(ctx, rt, images, args[0], args[1:]); err != nil {
		fail(err)
	}
}

func run(ctx context.Context, rt runtimeapi.RuntimeServiceClient, images runtimeapi.ImageServiceClient, verb string, a []string) error {
	need := map[string]int{"version": 0, "runp": 1, "create": 3, "start": 1, "stop": 2, "rm": 1, "stopp": 1, "rmp": 1,
		"inspect": 1, "inspectp": 1, "image": 1}
	n, known := need[verb]
	if !known {
		return fmt.Errorf("unknown verb %q", verb)
	}
	if len(a) != n {
		return fmt.Errorf("%s takes %d arguments, not %d", verb, n, len(a))
	}
	switch verb {
	case "version":
		r, err := rt.Version(ctx, &runtimeapi.VersionRequest{})
		return printJSON(r, err)
	case "runp":
		var pod runtimeapi.PodSandboxConfig
		if err := readJSON(a[0], &pod); err != nil {
			return err
		}
		r, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &pod})
		if err != nil {
			return err
		}
		fmt.Println(r.PodSandboxId)
	case "create":
		var c runtimeapi.ContainerConfig
		var pod runtimeapi.PodSandboxConfig
		if err := readJSON(a[1], &c); err != nil {
			return err
		}
		if err := readJSON(a[2], &pod); err != nil {
			return err
		}
		r, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: a[0], Config: &c, SandboxConfig: &pod})
		if err != nil {
			return err
		}
		fmt.Println(r.ContainerId)
	case "start":
		_, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: a[0]})
		return err
	case "stop":
		seconds, err := strconv.ParseInt(a[1], 10, 64)
		if err != nil {
			return err
		}
		_, err = rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: a[0], Timeout: seconds})
		return err
	case "rm":
		_, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: a[0]})
		return err
	case "stopp":
		_, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: a[0]})
		return err
	case "rmp":
		_, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: a[0]})
		return err
	case "inspect":
		r, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: a[0], Verbose: true})
		return printJSON(r, err)
	case "inspectp":
		r, err := rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: a[0], Verbose: true})
		return printJSON(r, err)
	case "image":
		r, err := images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: a[0]}})
		return printJSON(r, err)
	}
	return nil
}

func readJSON(file string, v interface{}) error {
	b, err := ioutil.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	return nil
}

func printJSON(v interface{}, err error) error {
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "shmguard-cri:", err)
	os.Exit(1)
}
