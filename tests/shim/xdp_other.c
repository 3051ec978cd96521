// SPDX-License-Identifier: BSD-3-Clause
/*
 * An XDP program that is not droce's (another user of the interface): droce-run must refuse
 * an interface that has it, naming it, rather than take it over (test_shim_netns.sh).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int
other_xdp(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
