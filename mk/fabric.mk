# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The libfabric provider (issue 15): fabric/*.c -> $(OUTPUT)/fabric/libxdpwake-fi.so,
# an external ("DL") provider libfabric loads from FI_PROVIDER_PATH or from
# its default directory, <libfabric's libdir>/libfabric (make install).
# libxdpwake is linked in statically, through its public API only.  Built
# by `all` when libfabric's provider headers are there (scripts/deps.sh
# installs libfabric-dev).
FABRIC_SRCS := $(wildcard fabric/*.c)
FABRIC_SO := $(OUTPUT)/fabric/libxdpwake-fi.so
FABRIC_LIBDIR ?= $(shell $(PKG_CONFIG) --variable=libdir libfabric 2>/dev/null || echo /usr/lib/$(ARCH_TRIPLE))
# A system install (PREFIX /usr or /usr/local) goes where libfabric looks by
# default; any other PREFIX keeps it under $(LIBDIR) (FI_PROVIDER_PATH).
ifneq ($(filter /usr /usr/local,$(PREFIX)),)
FABRIC_PROVDIR ?= $(FABRIC_LIBDIR)/libfabric
else
FABRIC_PROVDIR ?= $(LIBDIR)/libfabric
endif
HAVE_FABRIC := $(wildcard /usr/include/rdma/providers/fi_prov.h)

.PHONY: fabric install-fabric uninstall-fabric

ifneq ($(HAVE_FABRIC),)
all: $(FABRIC_SO)
install: install-fabric
uninstall: uninstall-fabric
endif

fabric: $(FABRIC_SO)

$(OUTPUT)/fabric:
	$(Q)mkdir -p $@

$(FABRIC_SO): $(FABRIC_SRCS) $(wildcard fabric/*.h) fabric/libxdpwake-fi.map $(LIB_A) $(PUB_HDRS) | $(OUTPUT)/fabric
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) $(DEP_CFLAGS) -fPIC -fvisibility=hidden -shared \
		-Wl,--version-script=fabric/libxdpwake-fi.map -Wl,-z,defs \
		-o $@ $(FABRIC_SRCS) $(LIB_A) $(LDLIBS) -lfabric

install-fabric: $(FABRIC_SO)
	$(call msg,INSTALL,$(DESTDIR)$(FABRIC_PROVDIR))
	$(Q)install -d $(DESTDIR)$(FABRIC_PROVDIR)
	$(Q)install -m 755 $(FABRIC_SO) $(DESTDIR)$(FABRIC_PROVDIR)/

uninstall-fabric:
	$(Q)rm -f $(DESTDIR)$(FABRIC_PROVDIR)/libxdpwake-fi.so

# The provider's test programs (tests/fabric/: fi_unit, fi_defects), plain C
# on the libfabric API, with the helpers they share (fi_common.c) compiled
# once; not instrumented (with SANITIZE the tests preload the sanitizer
# runtimes the provider needs: tests/fabric/san_preload.sh).  The tests
# run $(OUTPUT)/tests/NAME.bin.
FABRIC_TEST_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -pthread -Ifabric -Itests/fabric
FABRIC_TEST_BINS := $(OUTPUT)/tests/fi_unit.bin $(OUTPUT)/tests/fi_defects.bin
FABRIC_TEST_COMMON := $(OUTPUT)/tests/fabric/fi_common.o

ifneq ($(HAVE_FABRIC),)
tests: $(FABRIC_TEST_BINS)
endif

$(OUTPUT)/tests/fabric:
	$(Q)mkdir -p $@

$(FABRIC_TEST_COMMON): tests/fabric/fi_common.c tests/fabric/fi_common.h | $(OUTPUT)/tests/fabric
	$(call msg,CC,$@)
	$(Q)$(CC) $(FABRIC_TEST_CFLAGS) -c $< -o $@

$(FABRIC_TEST_BINS): $(OUTPUT)/tests/%.bin: tests/fabric/%.c tests/fabric/fi_common.h \
		fabric/fi_xdpwake.h $(FABRIC_TEST_COMMON) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(FABRIC_TEST_CFLAGS) -o $@ $< $(FABRIC_TEST_COMMON) -lfabric
