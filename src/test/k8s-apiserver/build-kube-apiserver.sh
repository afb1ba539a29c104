#!/usr/bin/env bash
# Builds kube-apiserver and kubectl from Debian 12's kubernetes source package with Debian's Go
# (GOPATH mode, as debian/rules does), and caches them under $SHMGUARD_CACHE (default
# /var/cache/shmguard)/kube-apiserver/VERSION, keyed by the source version. Prints that directory.
# A second run finds the cache and prints it at once. Needs a deb-src entry for bookworm (.ci/run
# adds one), golang-go and dpkg-dev. kubectl is Debian's kubectl 1.20 (package kubernetes-client),
# built here so that it does not take /usr/bin/kubectl from a newer one installed elsewhere. The
# kubelet (for a one-node cluster on containerd) is built from the same tree with -tags providerless,
# which leaves out the cloud providers' SDKs.
#
# debian/rules runs `make WHAT=cmd/...`, which first runs every code generator over the whole tree.
# Of their outputs only pkg/generated/openapi/zz_generated.openapi.go is missing from the source
# (deepcopy, conversion and defaulter files are committed upstream), so this runs the vendored
# openapi-gen over exactly the packages Makefile.generated_files selects, then `go build`s
# cmd/kube-apiserver and cmd/kubectl, skipping the rest.
set -euo pipefail

cache_root=${SHMGUARD_CACHE:-/var/cache/shmguard}
version=$(apt-cache showsrc kubernetes 2>/dev/null | awk '/^Version:/ {print $2}' | sort -V | tail -n 1)
if [ -z "$version" ]; then
  echo "no kubernetes source package: add a deb-src entry for bookworm (see .ci/run) and apt-get update" >&2
  exit 1
fi
case "$version" in
  1.20.*) ;;
  *) echo "kubernetes source $version is not Debian 12's 1.20" >&2; exit 1 ;;
esac
# Keyed by the source version and this script (a changed recipe builds anew).
out_dir=$cache_root/kube-apiserver/$version-$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
built() { [ -x "$out_dir/kube-apiserver" ] && [ -x "$out_dir/kubectl" ] && [ -x "$out_dir/kubelet" ]; }
if built; then echo "$out_dir"; exit 0; fi

mkdir -p "$cache_root/kube-apiserver"
# One build at a time; a waiter finds the other's binary afterwards.
exec 9>"$cache_root/kube-apiserver/.lock"
flock 9
if built; then echo "$out_dir"; exit 0; fi

work=$(mktemp -d /var/tmp/kube-apiserver-build.XXXXXX)
# Everything the build writes (Go's cache and temporary files too) is under $work, removed however
# the script ends.
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
cd "$work"
echo "building kube-apiserver $version in $work" >&2
apt-get source --download-only "kubernetes=$version" >&2
mkdir -p go/src/k8s.io
# dpkg-source checks the files against the .dsc and applies debian/patches, as the package build
# does (apt-get has checked the .dsc against the signed Sources index).
dpkg-source -x kubernetes_*.dsc go/src/k8s.io/kubernetes >&2

export GOPATH=$work/go GO111MODULE=off CGO_ENABLED=0 GOFLAGS='' GOCACHE=$work/gocache GOTMPDIR=$work/tmp
mkdir -p "$GOTMPDIR"
export PATH=/usr/lib/go/bin:$PATH
cd "$GOPATH/src/k8s.io/kubernetes"
go version >&2

go build -o "$work/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen

# The vendored github.com/modern-go/reflect2 v1.0.1 calls the runtime's mapiterinit with its
# pre-Go-1.18 signature: built with Go 1.19, the API server crashes (SIGSEGV in
# UnsafeMapType.UnsafeIterate) when json-iterator encodes a map, as for a custom resource. Debian's
# golang-github-modern-go-reflect2-dev is 1.0.2, the release that fixed it: vendor that instead.
reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
[ -f "$reflect2/go_above_118.go" ] || { echo "needs golang-github-modern-go-reflect2-dev (1.0.2)" >&2; exit 1; }
rm -rf vendor/github.com/modern-go/reflect2
cp -r "$reflect2" vendor/github.com/modern-go/reflect2

# The directories Makefile.generated_files gives openapi-gen for pkg/generated/openapi: every Go
# directory outside _*, .* and vendor (staging/src named as vendor), whose files carry a
# '+k8s:' tag and '+k8s:openapi-gen=', less code-generator and sample-apiserver.
dirs=$(find -H . -not \( \( -path './_*' -o -path './.*' -o -path ./vendor \) -prune \) \
         -type f -name '*.go' \
       | sed -e 's|^./staging/src|vendor|' -e 's|^./||' -e 's|/[^/]*$||' | LC_ALL=C sort -u \
       | while read -r d; do find "$d" -maxdepth 1 -type f -name '*.go'; done \
       | xargs grep --color=never -l '^// *+k8s:' \
       | xargs grep --color=never -l '+k8s:openapi-gen=' \
       | grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' \
       | xargs -n1 dirname | LC_ALL=C sort -u | sed 's|^|k8s.io/kubernetes/|' | paste -sd, -)
"$work/openapi-gen" --logtostderr -v 1 -i "$dirs" \
  -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
  -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
  -r "$work/openapi-violations.report" 2>&1 | tail -n 5 >&2
test -s pkg/generated/openapi/zz_generated.openapi.go

# The version kubectl and /version report, as hack/lib/version.sh would set it from the tarball.
ldflags="-s -w"
for kv in "gitVersion=v1.20.2" "gitMajor=1" "gitMinor=20" "gitTreeState=archive" \
          "buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"; do
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ldflags+=" -X k8s.io/kubernetes/vendor/$pkg.${kv%%=*}=${kv#*=}"
  done
done
mkdir -p "$work/bin"
go build -ldflags "$ldflags" -o "$work/bin/" ./cmd/kube-apiserver ./cmd/kubectl
go build -tags providerless -ldflags "$ldflags" -o "$work/bin/" ./cmd/kubelet

mkdir -p "$out_dir"
for b in kube-apiserver kubectl kubelet; do
  install -m 0755 "$work/bin/$b" "$out_dir/$b.tmp"
  mv "$out_dir/$b.tmp" "$out_dir/$b"
done
echo "$out_dir"
