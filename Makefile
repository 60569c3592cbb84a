# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# xdpwake build.  `make` builds into $(OUTPUT) quietly (V=1 shows commands).
#   make deps      install missing Debian packages (nothing if all present)
#   make test      deps + build + run the test suite (tests/run.sh)
#   make test-repeat N=10 [LOAD=1]  the suite N times in a row (LOAD=1: a CPU
#                  hog per core meanwhile); each run's failures and the totals
#   make install   PREFIX=/usr/local DESTDIR=
#   make bench-xdp per-frame cost of the XDP program (BPF_PROG_TEST_RUN)

VERSION_MAJOR := 0
VERSION_MINOR := 3
VERSION_PATCH := 0
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
# The ABI number in the soname, apart from VERSION: at 0.x a minor release
# may break the ABI, and then SOVERSION goes up by one (0.1: .so.0; 0.2
# broke it: .so.1; 0.3 broke it, sz in struct xw_stats, xw_status and
# xw_knob_info, xw_wait_opts.timeout_set, test-only fields out of
# xw_endpoint_opts: .so.2).  At 1.0 and later it follows VERSION_MAJOR.
SOVERSION := 2

OUTPUT ?= .output
override OUTPUT := $(abspath $(OUTPUT))
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
DESTDIR ?=

CC ?= gcc
CXX ?= g++
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
ARCH_TRIPLE := $(shell $(CC) -dumpmachine)

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(OUTPUT)/%,%,$(2))";
MAKEFLAGS += --no-print-directory
endif

WERROR ?= 0
SANITIZE ?=
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
SAN_FLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer,)

DEP_CFLAGS = $(shell $(PKG_CONFIG) --cflags libbpf libxdp 2>/dev/null)
DEP_LIBS = $(shell $(PKG_CONFIG) --libs libbpf libxdp 2>/dev/null || echo -lxdp -lbpf -lelf -lz)
# -Ibpf: bpf/xdpwake_maps.h, the BPF map layouts (not installed).
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARNINGS) -Iinclude -Ibpf -I$(OUTPUT) $(SAN_FLAGS)
LIB_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden
LDLIBS := $(DEP_LIBS) -lpthread

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -Wall -Werror -Iinclude -Ibpf \
	-I/usr/include/$(ARCH_TRIPLE)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
# The benchmarks' own BPF programs (bench/bpf/): skeletons beside the others,
# needed by the benchmark programs only.
BENCH_BPF_SRCS := $(wildcard bench/bpf/*.bpf.c)
BENCH_SKELS := $(patsubst bench/bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BENCH_BPF_SRCS))
# BPF programs of the tests only (tests/bpf/): skeletons beside the others.
TEST_BPF_SRCS := $(wildcard tests/bpf/*.bpf.c)
TEST_SKELS := $(patsubst tests/bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(TEST_BPF_SRCS))

LIB_SRCS := $(wildcard userspace/lib/*.c)
LIB_OBJS := $(patsubst userspace/lib/%.c,$(OUTPUT)/lib/%.o,$(LIB_SRCS))
PUB_HDRS := include/xdpwake.h include/xdpwake/proto.h
# Not installed (the install rule names PUB_HDRS only): the BPF map layouts
# the program, the library, the tests and the benchmarks share.
INT_HDRS := bpf/xdpwake_maps.h
LIB_A := $(OUTPUT)/libxdpwake.a
SONAME := libxdpwake.so.$(SOVERSION)
LIB_SO := $(OUTPUT)/libxdpwake.so.$(VERSION)
CLI := $(OUTPUT)/xdpwake
CLI_SRCS := $(wildcard userspace/cli/*.c)
# The internal helper library of the tool, the benchmarks and the tests
# (measurement, statistics, the address rendezvous, JSON); never installed.
UTIL_SRCS := $(wildcard userspace/util/*.c)
UTIL_OBJS := $(patsubst userspace/util/%.c,$(OUTPUT)/util/%.o,$(UTIL_SRCS))
UTIL_A := $(OUTPUT)/libxwutil.a
UTIL_HDRS := $(wildcard userspace/util/*.h)

TEST_SRCS := $(wildcard tests/test_*.c)
# The tests' compiled helpers (tests/lib/), one archive linked into each.
XWT_SRCS := $(wildcard tests/lib/*.c)
XWT_OBJS := $(patsubst tests/lib/%.c,$(OUTPUT)/tests/lib/%.o,$(XWT_SRCS))
XWT_HDRS := $(wildcard tests/lib/*.h) $(UTIL_HDRS) # and the util headers they include
XWT_A := $(OUTPUT)/tests/libxwt.a
TEST_BINS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(TEST_SRCS))
BENCH_SRCS := $(wildcard bench/*.c)
# A benchmark program of several files: bench/NAME/*.c, one program NAME.
BENCH_MULTI := xwbench
BENCH_BINS := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS)) \
	$(patsubst %,$(OUTPUT)/bench/%,$(BENCH_MULTI))

.DELETE_ON_ERROR:
.PHONY: FORCE test-repeat readme bench-wait bench-wait-quick all deps test check tests benches install uninstall clean bench-xdp demo

all: $(LIB_A) $(LIB_SO) $(CLI) $(OUTPUT)/xdpwake.8

FORCE:

deps:
	$(Q)scripts/deps.sh

test:
	$(Q)$(MAKE) deps
	$(Q)$(MAKE) check

check: all tests
	$(Q)OUTPUT=$(OUTPUT) SANITIZE=$(SANITIZE) tests/run.sh

N ?= 10
LOAD ?= 0
test-repeat:
	$(Q)$(MAKE) deps
	$(Q)$(MAKE) all tests
	$(Q)OUTPUT=$(OUTPUT) SANITIZE=$(SANITIZE) LOAD=$(LOAD) tests/repeat.sh $(N)

# Helper programs of the shell tests (not tests themselves).
TEST_HELPERS := $(OUTPUT)/tests/mpi/fault_hosts $(OUTPUT)/tests/mpi/steer \
	$(OUTPUT)/tests/multiq_peer

tests: $(TEST_BINS) $(TEST_HELPERS) $(BENCH_BINS)
benches: $(BENCH_BINS)

# The main job: two namespaces joined by veth, the program attached, a table
# per policy (scripts/demo.sh; IFACE=... runs on a real NIC).
demo:
	$(Q)$(MAKE) deps
	$(Q)$(MAKE) all benches
	$(Q)OUTPUT=$(OUTPUT) scripts/demo.sh

# Wait strategies against think time, five pairs with and without a CPU hog
# (bench/wait_strategies.sh -> bench/results, bench/RESULTS.md).
bench-wait:
	$(Q)scripts/deps.sh python3-matplotlib time procps
	$(Q)$(MAKE) all
	$(Q)OUTPUT=$(OUTPUT) bench/wait_strategies.sh

bench-wait-quick:
	$(Q)scripts/deps.sh python3-matplotlib time procps
	$(Q)$(MAKE) all
	$(Q)OUTPUT=$(OUTPUT) bench/wait_strategies.sh --quick --no-md --results $(OUTPUT)/bench/results

bench-xdp: $(OUTPUT)/bench/xdp_cost
	$(Q)$(OUTPUT)/bench/xdp_cost

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/lib $(OUTPUT)/util $(OUTPUT)/cli $(OUTPUT)/tests $(OUTPUT)/tests/mpi \
		$(OUTPUT)/tests/bpf $(OUTPUT)/tests/lib $(OUTPUT)/bench $(OUTPUT)/bench/bpf:
	$(Q)mkdir -p $@

$(TEST_HELPERS): | $(OUTPUT)/tests/mpi

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c include/xdpwake/proto.h $(INT_HDRS) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/bpf/%.bpf.o: tests/bpf/%.bpf.c include/xdpwake/proto.h $(INT_HDRS) tests/lib/fault_maps.h | $(OUTPUT)/tests/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/bench/bpf/%.bpf.o: bench/bpf/%.bpf.c | $(OUTPUT)/bench/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Skeleton names: xdpwake.bpf.c -> struct xw_xdp_bpf; others -> <name>_bpf
$(OUTPUT)/xdpwake.skel.h: $(OUTPUT)/bpf/xdpwake.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name xw_xdp_bpf > $@
$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@
$(TEST_SKELS): $(OUTPUT)/%.skel.h: $(OUTPUT)/tests/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@
$(BENCH_SKELS): $(OUTPUT)/%.skel.h: $(OUTPUT)/bench/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(OUTPUT)/lib/%.o: userspace/lib/%.c $(PUB_HDRS) $(INT_HDRS) $(wildcard userspace/lib/*.h) $(SKELS) | $(OUTPUT)/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LIB_CFLAGS) $(DEP_CFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/util/%.o: userspace/util/%.c $(wildcard userspace/util/*.h) | $(OUTPUT)/util
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) -c $< -o $@

$(UTIL_A): $(UTIL_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJS) userspace/libxdpwake.map
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=userspace/libxdpwake.map -o $@ $(LIB_OBJS) $(LDLIBS)
	$(Q)ln -sf $(notdir $@) $(OUTPUT)/$(SONAME)
	$(Q)ln -sf $(SONAME) $(OUTPUT)/libxdpwake.so

$(CLI): $(CLI_SRCS) $(wildcard userspace/cli/*.h) $(LIB_A) $(UTIL_A) $(UTIL_HDRS) $(PUB_HDRS) | $(OUTPUT)/cli
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) $(DEP_CFLAGS) -Iuserspace/util \
		-DXW_VERSION_STR='"$(VERSION)"' -o $@ $(CLI_SRCS) $(LIB_A) $(UTIL_A) $(LDLIBS)

$(OUTPUT)/tests/lib/%.o: tests/lib/%.c $(XWT_HDRS) $(PUB_HDRS) $(INT_HDRS) $(wildcard userspace/lib/*.h) $(SKELS) $(TEST_SKELS) | $(OUTPUT)/tests/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) $(DEP_CFLAGS) -Iuserspace/lib -Iuserspace/util -Itests/lib \
		-c $< -o $@

$(XWT_A): $(XWT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/tests/%: tests/%.c $(XWT_HDRS) $(wildcard userspace/lib/*.h) $(XWT_A) $(LIB_A) $(UTIL_A) $(PUB_HDRS) $(INT_HDRS) $(SKELS) \
		$(TEST_SKELS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) $(DEP_CFLAGS) -Iuserspace/lib -Iuserspace/util -Itests/lib \
		-o $@ $< $(XWT_A) $(LIB_A) $(UTIL_A) $(LDLIBS)

$(OUTPUT)/bench/%: bench/%.c $(LIB_A) $(UTIL_A) $(UTIL_HDRS) $(PUB_HDRS) $(INT_HDRS) $(SKELS) $(BENCH_SKELS) \
		| $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) $(DEP_CFLAGS) -Iuserspace/lib -Iuserspace/util \
		-o $@ $< $(LIB_A) $(UTIL_A) $(LDLIBS)

# policy_demo runs on the tests' end-to-end harness (tests/lib/xwt_e2e.h),
# xdp_cost on their BPF_PROG_TEST_RUN harness (tests/lib/xwt_xdp.h): the
# headers and the compiled helpers (libxwt.a).
BENCH_ON_XWT := $(OUTPUT)/bench/policy_demo $(OUTPUT)/bench/xdp_cost
$(BENCH_ON_XWT): $(OUTPUT)/bench/%: bench/%.c $(XWT_HDRS) $(XWT_A) $(LIB_A) $(UTIL_A) $(PUB_HDRS) \
		$(INT_HDRS) $(SKELS) $(BENCH_SKELS) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) $(DEP_CFLAGS) -Iuserspace/lib -Iuserspace/util -Itests/lib \
		-o $@ $< $(XWT_A) $(LIB_A) $(UTIL_A) $(LDLIBS)

$(OUTPUT)/bench/xwbench: $(wildcard bench/xwbench/*.c bench/xwbench/*.h) $(LIB_A) $(UTIL_A) $(UTIL_HDRS) \
		$(PUB_HDRS) userspace/lib/testhook.h | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) $(DEP_CFLAGS) -Iuserspace/util -Ibench/xwbench \
		-Iuserspace/lib -o $@ $(wildcard bench/xwbench/*.c) $(LIB_A) $(UTIL_A) $(LDLIBS)

# Always regenerated: PREFIX/LIBDIR/INCLUDEDIR may differ between installs.
# The man page and the README's command reference come from the tool's own
# command table (userspace/cli/doc.c): `make readme` refreshes the README.
$(OUTPUT)/xdpwake.8: $(CLI)
	$(call msg,GEN-MAN,$@)
	$(Q)$(CLI) help --man > $@

readme: $(CLI)
	$(Q)scripts/readme-cli.sh $(CLI) README.md

$(OUTPUT)/libxdpwake.pc: userspace/libxdpwake.pc.in FORCE | $(OUTPUT)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

install: all $(OUTPUT)/libxdpwake.pc
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/xdpwake \
		$(DESTDIR)$(BINDIR)
	$(Q)install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libxdpwake.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	$(Q)ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libxdpwake.so
	$(Q)install -m 644 include/xdpwake.h $(DESTDIR)$(INCLUDEDIR)/
	$(Q)install -m 644 include/xdpwake/proto.h $(DESTDIR)$(INCLUDEDIR)/xdpwake/
	$(Q)install -m 644 $(OUTPUT)/libxdpwake.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	$(Q)install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/
	$(Q)install -d $(DESTDIR)$(DATADIR)/xdpwake $(DESTDIR)$(MANDIR)/man8
	$(Q)install -m 644 $(OUTPUT)/xdpwake.8 $(DESTDIR)$(MANDIR)/man8/
	$(Q)install -m 644 dissector/xdpwake.lua $(DESTDIR)$(DATADIR)/xdpwake/

uninstall:
	$(Q)rm -f $(DESTDIR)$(LIBDIR)/libxdpwake.* $(DESTDIR)$(LIBDIR)/pkgconfig/libxdpwake.pc \
		$(DESTDIR)$(INCLUDEDIR)/xdpwake.h $(DESTDIR)$(BINDIR)/xdpwake
	$(Q)rm -rf $(DESTDIR)$(INCLUDEDIR)/xdpwake $(DESTDIR)$(DATADIR)/xdpwake
	$(Q)rm -f $(DESTDIR)$(MANDIR)/man8/xdpwake.8

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

# Further targets, one file per area (fuzzers, benchmarks, soak).
include $(sort $(wildcard mk/*.mk))
