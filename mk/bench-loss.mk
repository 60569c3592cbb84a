# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Issue 26: recovery time under loss, xdpwake against TCP through the fault
# harness (bench/loss.c on tests/lib/fault.h); bench/loss.sh writes
# loss.json, loss.md and loss.png, bench/loss_report.py tabulates and plots.
#   make bench-loss          full run into bench/results
#   make bench-loss-quick    a few minutes, into $(OUTPUT)/bench/results
.PHONY: bench-loss bench-loss-quick

# It runs on the tests' fault harness: its headers and libxwt.a.
$(OUTPUT)/bench/loss: bench/loss.c $(XWT_HDRS) $(XWT_A) $(LIB_A) $(UTIL_A) $(PUB_HDRS) \
		$(INT_HDRS) $(SKELS) $(TEST_SKELS) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(BASE_CFLAGS) $(DEP_CFLAGS) -Iuserspace/util -Itests/lib \
		-o $@ $< $(XWT_A) $(LIB_A) $(UTIL_A) $(LDLIBS) -lm

bench-loss:
	$(Q)scripts/deps.sh python3-matplotlib
	$(Q)$(MAKE) all $(OUTPUT)/bench/loss
	$(Q)OUTPUT=$(OUTPUT) bench/loss.sh --out bench/results

bench-loss-quick:
	$(Q)scripts/deps.sh python3-matplotlib
	$(Q)$(MAKE) all $(OUTPUT)/bench/loss
	$(Q)OUTPUT=$(OUTPUT) bench/loss.sh --quick --out $(OUTPUT)/bench/results
