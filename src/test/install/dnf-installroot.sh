#!/usr/bin/env bash
# Installs shmguard with dnf from a release's yum repository (what packaging/release/release made)
# into an empty --installroot, as a RHEL host's dnf would: repo_gpgcheck verifies repomd.xml.asc,
# gpgcheck the package's signature, both against the release's published key.
#
#   src/test/install/dnf-installroot.sh DIR      (DIR: the release; needs dnf, rpmbuild, createrepo_c)
#
# The installroot has no distribution: a stand-in package (made here with rpmbuild, in a second,
# unsigned local repository) provides what shmguard requires (java-headless, /bin/sh), and the
# scriptlets are not run (tsflags=noscripts; they need a booted system: InstalledForRealTest runs the
# .deb's). Prints "CHECK <what>: ok"; exits non-zero at the first failed check; leaves nothing behind.
set -euo pipefail

release=$(realpath "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/shmguard-dnf.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root" "$work/repos" "$work/standins/rpms"

cat > "$work/stand-ins.spec" <<'SPEC'
Name: shmguard-test-stand-ins
Version: 1
Release: 1
Summary: What shmguard requires, for an installroot with no distribution
License: Apache-2.0
BuildArch: noarch
Provides: java-headless = 1:17
Provides: /bin/sh
%description
Stand-ins for the dnf test of a shmguard release.
%files
SPEC
rpmbuild -bb --quiet --define "_topdir $work/rpmbuild" "$work/stand-ins.spec" >"$work/rpmbuild.log" 2>&1 \
  || { echo "FAIL rpmbuild"; cat "$work/rpmbuild.log"; exit 1; }
cp "$work"/rpmbuild/RPMS/noarch/*.rpm "$work/standins/rpms/"
createrepo_c --quiet "$work/standins"

repo() {
  cat > "$work/repos/shmguard.repo" <<REPO
[shmguard]
name=shmguard
baseurl=file://$release/yum
gpgcheck=1
repo_gpgcheck=$2
gpgkey=file://$1

[stand-ins]
name=stand-ins
baseurl=file://$work/standins
gpgcheck=0
REPO
}
dnf_() {
  dnf -y --installroot="$root" --releasever=1 --setopt=reposdir="$work/repos" --setopt=cachedir="$work/cache" \
    --setopt=tsflags=noscripts --setopt=install_weak_deps=0 "$@"
}

# Another key: dnf must refuse the repository's metadata.
gpg --batch --quiet --homedir "$work" --passphrase '' --quick-gen-key 'another <another@example.invalid>' rsa2048 sign never 2>/dev/null
gpg --batch --quiet --homedir "$work" --armor --export another@example.invalid > "$work/another.asc"
gpgconf --homedir "$work" --kill all
refused() {
  rm -rf "$root" "$work/cache"
  mkdir -p "$root"
  if dnf_ install shmguard >"$work/refused.log" 2>&1; then
    echo "FAIL dnf installed from the repository under a key that did not sign it ($1)"; cat "$work/refused.log"; exit 1
  fi
  [ ! -e "$root/usr/bin/shmguard" ] || { echo "FAIL refused, but /usr/bin/shmguard is there"; exit 1; }
  grep -qi "$2" "$work/refused.log" || { echo "FAIL dnf refused, but not for the signature ($1)"; cat "$work/refused.log"; exit 1; }
}
repo "$work/another.asc" 1
refused "repomd.xml" "repomd.xml GPG signature verification error"
echo "CHECK dnf refuses the repository's metadata under another key (repo_gpgcheck): ok"
repo "$work/another.asc" 0
refused "the package" "GPG check FAILED"
echo "CHECK dnf refuses the package under another key (gpgcheck): ok"

rm -rf "$root" "$work/cache"
mkdir -p "$root"
repo "$release/shmguard-archive-keyring.asc" 1
dnf_ install shmguard >"$work/install.log" 2>&1 || { echo "FAIL dnf install shmguard"; cat "$work/install.log"; exit 1; }
want=$(rpm -qp --nosignature --qf '%{VERSION}-%{RELEASE}' "$release"/yum/shmguard-*.noarch.rpm)
got=$(rpm --root "$root" -q --qf '%{VERSION}-%{RELEASE}' shmguard)
[ "$got" = "$want" ] || { echo "FAIL rpm -q shmguard in the installroot: '$got', the repository has $want"; exit 1; }
if [ ! -x "$root/usr/bin/shmguard" ] || [ ! -s "$root/usr/share/shmguard/shmguard.jar" ]; then
  echo "FAIL installed without /usr/bin/shmguard or the jar"; exit 1
fi
echo "CHECK dnf installed shmguard $want with repo_gpgcheck and gpgcheck: ok"
rpm --root "$root" -V shmguard >"$work/verify.log" 2>&1 || { echo "FAIL rpm -V"; cat "$work/verify.log"; exit 1; }
echo "CHECK rpm -V finds the installed files as packaged: ok"
