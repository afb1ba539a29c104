#!/usr/bin/env bash
# Builds packaging/kubernetes/Containerfile with buildah, with no registry pull, and saves the
# image as an OCI archive (no registry push). From the repository root, as root:
#
#   mvn -B -Ppackages -DskipTests clean package          # target/shmguard_<version>_all.deb
#   packaging/kubernetes/build-image.sh                   # target/shmguard-image_<tag>.oci.tar
#
# The Containerfile's base (debian:12-slim from a registry) is replaced by a Debian 12 root made
# here with debootstrap --variant=minbase from Debian's archive, with default-jre-headless already
# in it, copied into an image with `buildah from scratch`. Then `buildah bud` runs the Containerfile
# itself on that base: its COPY, RUN (apt-get update, the .deb installed, the AppCDS archive
# made), ENTRYPOINT and CMD, nothing re-stated here. The RUN step reaches Debian's archive (apt-get
# update), as debootstrap does; no container registry is asked.
#
#   SHMGUARD_IMAGE_ROOT     the debootstrapped root, made once and reused
#                           (default /var/cache/shmguard/bookworm-jre-root)
#   SHMGUARD_DEBIAN_MIRROR  Debian's archive for debootstrap (default http://deb.debian.org/debian)
#   SHMGUARD_IMAGE_OUT      the archive to write (default target/shmguard-image_<tag>.oci.tar)
#
# buildah uses its usual storage and configuration (CONTAINERS_STORAGE_CONF, CONTAINERS_CONF);
# the images it builds stay there: localhost/shmguard:<tag> and the base
# localhost/shmguard-base:bookworm. <tag> is the package version with ~ as - (0.1.0-SNAPSHOT).
# Prints "IMAGE <archive> <name>" last.
set -euo pipefail
cd "$(dirname "$0")/../.."

root=${SHMGUARD_IMAGE_ROOT:-/var/cache/shmguard/bookworm-jre-root}
mirror=${SHMGUARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}

shopt -s nullglob
debs=(target/shmguard_*_all.deb)
shopt -u nullglob
if [ "${#debs[@]}" -ne 1 ]; then
  echo "build-image.sh: need exactly one target/shmguard_*_all.deb, found ${#debs[@]}: run mvn -B -Ppackages -DskipTests clean package" >&2
  exit 1
fi
version=$(dpkg-deb -f "${debs[0]}" Version)
tag=${version//\~/-}
out=${SHMGUARD_IMAGE_OUT:-target/shmguard-image_$tag.oci.tar}

if [ ! -d "$root" ]; then
  echo "making the Debian 12 root $root (once; from $mirror)" >&2
  tmp="$root.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase --include=default-jre-headless bookworm "$tmp" "$mirror" >&2
  # What a base image leaves out: downloaded packages and the package lists.
  rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*
  mv -T "$tmp" "$root"
fi

base=localhost/shmguard-base:bookworm
ctr=$(buildah from --quiet scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
mnt=$(buildah mount "$ctr")
cp -a "$root/." "$mnt/"
buildah umount "$ctr" >/dev/null
buildah config --created-by "debootstrap --variant=minbase --include=default-jre-headless bookworm" \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/bash "$ctr"
buildah commit --quiet --rm "$ctr" "$base" >/dev/null
trap - EXIT

image=localhost/shmguard:$tag
buildah bud --pull=never --network host --layers=false \
  --build-arg BASE="$base" --build-arg VERSION="$version" \
  -f packaging/kubernetes/Containerfile -t "$image" . >&2

rm -f "$out"
buildah push --quiet "$image" "oci-archive:$out:shmguard:$tag" >&2
echo "IMAGE $out shmguard:$tag"
