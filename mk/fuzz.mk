# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# libFuzzer targets (tests/fuzz/fuzz_*.c) for the frame parser and the
# protocol engine.  Always clang + libFuzzer + ASan + UBSan, whatever CC and
# SANITIZE say; the pure library sources they need are compiled again with
# coverage.  Without clang or libFuzzer the binaries are not built and
# tests/test_fuzz.sh skips.
#   make fuzz              FUZZ_SECONDS=300 per target; crashers go to
#                          $(OUTPUT)/fuzz/crashes/, the grown corpus to
#                          $(OUTPUT)/fuzz/corpus/<target>/
#   make fuzz-corpus       regenerate tests/fuzz/corpus/ from engine traffic

FUZZ_CC ?= $(CLANG)
FUZZ_SECONDS ?= 300
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
FUZZ_LIB := engine conn peer msg stream match crc32c frame addr
# The in-memory link and payload pattern of the engine tests (tests/lib/link.c),
# compiled again with the fuzzers' flags.
FUZZ_LIB_OBJS := $(patsubst %,$(OUTPUT)/fuzz/obj/%.o,$(FUZZ_LIB)) $(OUTPUT)/fuzz/obj/link.o
FUZZ_HDRS := $(PUB_HDRS) $(wildcard userspace/lib/*.h) $(wildcard tests/fuzz/*.h) tests/lib/link.h
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE $(WARNINGS) -Iinclude -Ibpf -Iuserspace/lib \
	-Itests/fuzz -Itests/lib $(FUZZ_SAN)
FUZZ_GEN := $(OUTPUT)/fuzz/gen_corpus

.PHONY: fuzz fuzz-bins fuzz-corpus
.SECONDARY: $(FUZZ_LIB_OBJS)

tests: $(FUZZ_BINS)
fuzz-bins: $(FUZZ_BINS)

$(OUTPUT)/fuzz $(OUTPUT)/fuzz/obj:
	$(Q)mkdir -p $@

# Can $(FUZZ_CC) link a libFuzzer target with ASan and UBSan?  (Not: the
# binaries are left out, quietly, and test_fuzz.sh reports the skip.)
fuzz_probe = printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{ return 0; }\n' | \
	$(FUZZ_CC) -x c -fsanitize=fuzzer,address,undefined -o /dev/null - >/dev/null 2>&1

$(OUTPUT)/fuzz/obj/%.o: userspace/lib/%.c $(FUZZ_HDRS) | $(OUTPUT)/fuzz/obj
	$(call msg,FUZZ-CC,$@)
	$(Q)if $(fuzz_probe); then \
		$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@; \
	else rm -f $@; fi

$(OUTPUT)/fuzz/obj/link.o: tests/lib/link.c $(FUZZ_HDRS) | $(OUTPUT)/fuzz/obj
	$(call msg,FUZZ-CC,$@)
	$(Q)if $(fuzz_probe); then \
		$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@; \
	else rm -f $@; fi

$(OUTPUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) $(FUZZ_HDRS) | $(OUTPUT)/fuzz
	$(call msg,FUZZ-LD,$@)
	$(Q)if $(fuzz_probe); then \
		$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJS); \
	else echo "  (no clang with libFuzzer: $(notdir $@) not built)"; rm -f $@; fi

# Corpus generator: real engine traffic (plain CC, the library's sources).
$(FUZZ_GEN): tests/fuzz/gen_corpus.c tests/lib/link.c $(FUZZ_HDRS) $(LIB_A) | $(OUTPUT)/fuzz
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) -Iuserspace/lib -Itests/fuzz -Itests/lib -o $@ $< \
		tests/lib/link.c $(LIB_A) $(LDLIBS)

fuzz-corpus: $(FUZZ_GEN)
	$(Q)$(FUZZ_GEN) tests/fuzz/corpus

fuzz: $(FUZZ_BINS)
	$(Q)mkdir -p $(OUTPUT)/fuzz/crashes
	$(Q)OUTPUT=$(OUTPUT) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_SEED=$${FUZZ_SEED:-0} \
		FUZZ_CRASH_DIR=$(OUTPUT)/fuzz/crashes FUZZ_WORK_DIR=$(OUTPUT)/fuzz/corpus \
		tests/test_fuzz.sh
