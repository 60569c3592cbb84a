#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Install the Debian packages xdpwake needs to build, test and run; do
# nothing when all are present.  Extra packages can be passed as arguments.
set -eu
pkgs="gcc g++ make libbpf-dev libxdp-dev bpftool clang llvm libelf-dev zlib1g-dev
pkg-config iproute2 ethtool libclang-rt-14-dev python3 util-linux tshark man-db
libfabric-dev libfabric-bin openmpi-bin libopenmpi-dev $*"
missing=""
for p in $pkgs; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "deps: need root to run: apt-get install$missing" >&2; exit 1
	fi
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
