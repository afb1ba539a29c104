#!/usr/bin/env bash
# Builds what testing.ContainerdCri needs from Debian 12's kubernetes source package and caches it
# under $SHMGUARD_CACHE (default /var/cache/shmguard)/cri-tools/VERSION-KEY, keyed by the source
# version and the sha256 of this script and of shmguard-cri.go beside it. Prints that directory.
# A second run finds the cache and prints it at once.
#
#   pause          build/pause/linux/pause.c, compiled static as the pause image's Makefile does
#                  (-Os -Wall -Werror -static); the test makes the image from it
#   shmguard-cri   shmguard-cri.go, a minimal CRI client (crictl is not in Debian 12), built in
#                  GOPATH mode against the source tree's vendored cri-api and grpc, as the
#                  kube-apiserver build (../k8s-apiserver) builds its binaries
#
# Needs a deb-src entry for bookworm (.ci/run adds one), golang-go, dpkg-dev, gcc and libc6-dev.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
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
key=$(cat "${BASH_SOURCE[0]}" "$here/shmguard-cri.go" | sha256sum | cut -c1-12)
out_dir=$cache_root/cri-tools/$version-$key
built() { [ -x "$out_dir/pause" ] && [ -x "$out_dir/shmguard-cri" ]; }
if built; then echo "$out_dir"; exit 0; fi

mkdir -p "$cache_root/cri-tools"
# One build at a time; a waiter finds the other's binaries afterwards.
exec 9>"$cache_root/cri-tools/.lock"
flock 9
if built; then echo "$out_dir"; exit 0; fi

work=$(mktemp -d /var/tmp/cri-tools-build.XXXXXX)
# Everything the build writes (Go's cache and temporary files too) is under $work, removed however
# the script ends.
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
cd "$work"
echo "building the CRI test tools from kubernetes $version in $work" >&2
apt-get source --download-only "kubernetes=$version" >&2
mkdir -p go/src/k8s.io
dpkg-source -x kubernetes_*.dsc go/src/k8s.io/kubernetes >&2
src=$work/go/src/k8s.io/kubernetes

mkdir -p "$work/bin"
gcc -Os -Wall -Werror -static -DVERSION="v3.4-debian-$version" -o "$work/bin/pause" "$src/build/pause/linux/pause.c"

export GOPATH=$work/go GO111MODULE=off CGO_ENABLED=0 GOFLAGS='' GOCACHE=$work/gocache GOTMPDIR=$work/tmp
mkdir -p "$GOTMPDIR" "$src/cmd/shmguard-cri"
export PATH=/usr/lib/go/bin:$PATH
cp "$here/shmguard-cri.go" "$src/cmd/shmguard-cri/main.go"
cd "$src"
go build -ldflags "-s -w" -o "$work/bin/shmguard-cri" ./cmd/shmguard-cri

mkdir -p "$out_dir"
for b in pause shmguard-cri; do
  install -m 0755 "$work/bin/$b" "$out_dir/$b.tmp"
  mv "$out_dir/$b.tmp" "$out_dir/$b"
done
echo "$out_dir"
