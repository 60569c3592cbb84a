// SPDX-License-Identifier: GPL-2.0
/*
 * calib.bpf.c - calibration of the block-and-wake cost: run with
 * BPF_PROG_TEST_RUN while a thread sleeps on the ring, it submits a record
 * with BPF_RB_FORCE_WAKEUP exactly as the wake engine does, stamped with the
 * time of the submit; the woken thread's delay is one block-and-wake on the
 * real path (irq_work, wake-up, reschedule).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} calib_ring SEC(".maps");

SEC("xdp")
int xw_calib(struct xdp_md *ctx)
{
	__u64 t = bpf_ktime_get_ns();

	bpf_ringbuf_output(&calib_ring, &t, sizeof(t), BPF_RB_FORCE_WAKEUP);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
