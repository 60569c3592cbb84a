// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The device's n-tuple (flow steering) rules through the ethtool ioctl
 * interface (SIOCETHTOOL, struct ethtool_rxnfc): list the rules that steer
 * a UDP/IPv4 destination port to an RX queue, insert and delete such rules;
 * the device's RX queue count and driver name.  Used by `xdpwake steer` and
 * the checks of `xdpwake status`.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "cli.h"

/* Bounds the rule table we read (drivers have hundreds to a few thousand). */
#define NTUPLE_MAX_RULES 65536u

static int ethtool(const char *ifname, void *data)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	return err;
}

int cli_rx_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int err = ethtool(ifname, &ch);

	if (err)
		return err;
	return (int)(ch.rx_count + ch.combined_count);
}

int cli_driver(const char *ifname, char *buf, size_t len)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	int err = ethtool(ifname, &di);

	if (err)
		return err;
	snprintf(buf, len, "%.*s", (int)sizeof(di.driver), di.driver);
	return 0;
}

/* A UDP/IPv4 rule on the destination port alone (other fields may be
 * matched too: then not exact). */
static bool udp_port_rule(const struct ethtool_rx_flow_spec *fs, struct cli_ntuple_rule *r)
{
	const struct ethtool_tcpip4_spec *h = &fs->h_u.udp_ip4_spec, *m = &fs->m_u.udp_ip4_spec;

	if ((fs->flow_type & ~(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS)) != UDP_V4_FLOW ||
	    m->pdst != 0xFFFF)
		return false;
	r->loc = fs->location;
	r->port = ntohs(h->pdst);
	r->drop = fs->ring_cookie == RX_CLS_FLOW_DISC;
	r->queue = (__u32)ethtool_get_flow_spec_ring(fs->ring_cookie);
	r->exact = !m->ip4src && !m->ip4dst && !m->psrc && !m->tos &&
		   !(fs->flow_type & (FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS)) &&
		   !ethtool_get_flow_spec_ring_vf(fs->ring_cookie);
	return true;
}

int cli_ntuple_list(const char *ifname, struct cli_ntuple_list *out)
{
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT }, *all;
	int err;

	memset(out, 0, sizeof(*out));
	err = ethtool(ifname, &cnt);
	if (err)
		return err;
	out->table_size = cnt.data & ~RX_CLS_LOC_SPECIAL;
	out->loc_any = !!(cnt.data & RX_CLS_LOC_SPECIAL);
	out->nrules = cnt.rule_cnt;
	if (cnt.rule_cnt > NTUPLE_MAX_RULES)
		return -E2BIG;
	all = calloc(1, sizeof(*all) + (size_t)cnt.rule_cnt * sizeof(__u32));
	out->locs = calloc(cnt.rule_cnt ? cnt.rule_cnt : 1, sizeof(*out->locs));
	out->rules = calloc(cnt.rule_cnt ? cnt.rule_cnt : 1, sizeof(*out->rules));
	if (!all || !out->locs || !out->rules) {
		free(all);
		cli_ntuple_free(out);
		return -ENOMEM;
	}
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = cnt.rule_cnt;
	err = cnt.rule_cnt ? ethtool(ifname, all) : 0;
	if (err) {
		free(all);
		cli_ntuple_free(out);
		return err;
	}
	out->nrules = all->rule_cnt < cnt.rule_cnt ? all->rule_cnt : cnt.rule_cnt;
	for (__u32 i = 0; i < out->nrules; i++) {
		struct ethtool_rxnfc one = { .cmd = ETHTOOL_GRXCLSRULE };

		out->locs[i] = all->rule_locs[i];
		one.fs.location = all->rule_locs[i];
		if (ethtool(ifname, &one))
			continue; /* removed meanwhile */
		if (udp_port_rule(&one.fs, &out->rules[out->n]))
			out->n++;
	}
	free(all);
	return 0;
}

void cli_ntuple_free(struct cli_ntuple_list *l)
{
	free(l->rules);
	free(l->locs);
	l->rules = NULL;
	l->locs = NULL;
	l->n = l->nrules = 0;
}

int cli_ntuple_add(const char *ifname, const struct cli_ntuple_list *l, __u16 port, __u32 queue,
		   __u32 *loc)
{
	struct ethtool_rxnfc ins = { .cmd = ETHTOOL_SRXCLSRLINS };
	int err;

	ins.fs.flow_type = UDP_V4_FLOW;
	ins.fs.h_u.udp_ip4_spec.pdst = htons(port);
	ins.fs.m_u.udp_ip4_spec.pdst = 0xFFFF;
	ins.fs.ring_cookie = queue;
	if (l->loc_any) {
		ins.fs.location = RX_CLS_LOC_ANY;
	} else {
		/* The driver wants a location: the lowest free one. */
		__u32 loc0 = 0;

		for (bool used = true; used && loc0 < l->table_size; loc0 += used) {
			used = false;
			for (__u32 i = 0; i < l->nrules && !used; i++)
				used = l->locs[i] == loc0;
		}
		if (loc0 >= l->table_size)
			return -ENOSPC;
		ins.fs.location = loc0;
	}
	err = ethtool(ifname, &ins);
	if (!err)
		*loc = ins.fs.location;
	return err;
}

int cli_ntuple_del(const char *ifname, __u32 loc)
{
	struct ethtool_rxnfc del = { .cmd = ETHTOOL_SRXCLSRLDEL };

	del.fs.location = loc;
	return ethtool(ifname, &del);
}
