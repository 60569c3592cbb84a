# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The long soak (issue 4), outside `make test`:
#   make soak   SOAK_SECONDS (default 1800): the reliability soak through the
#               fault harness for SOAK_SECONDS (2% loss, 0.5% corruption, 1%
#               duplication, reordering; every byte verified, one session),
#               the 30% set-up-loss scenario 10 times (10 new seeds),
#               then the hostile-peers test and the endpoint cycles, then
#               each fuzzer for SOAK_SECONDS / 4.
SOAK_SECONDS ?= 1800

.PHONY: soak
soak: all tests
	$(Q)echo "soak: $(SOAK_SECONDS) s of traffic through the fault harness"
	$(Q)XW_SOAK_SECONDS=$(SOAK_SECONDS) $(OUTPUT)/tests/test_reliability
	$(Q)for i in 1 2 3 4 5 6 7 8 9 10; do \
		XWT_SCENARIO="30% set-up loss" $(OUTPUT)/tests/test_reliability || exit 1; \
	done
	$(Q)OUTPUT=$(OUTPUT) TESTS="test_hostile test_endpoint" tests/run.sh
	$(Q)if [ -x $(OUTPUT)/fuzz/fuzz_engine ]; then \
		FUZZ_SECONDS=$$(( $(SOAK_SECONDS) / 4 )) OUTPUT=$(OUTPUT) tests/test_fuzz.sh; \
	else echo "soak: fuzzers not built (no clang with libFuzzer)"; fi
