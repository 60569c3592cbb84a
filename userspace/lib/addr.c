// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Endpoint addresses: "MAC/ep" (Ethernet) and "IPv4:port/ep" (UDP), each
 * optionally followed by "/nonce" (16 hex digits). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The address is exchanged as bytes (the provider's fi_getname, a
 * launcher's business card): no padding, the same size everywhere. */
_Static_assert(sizeof(struct xw_addr) == 24, "struct xw_addr is 24 bytes");

static int parse_ep(const char *s, __u16 *ep)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v >= XW_MAX_ENDPOINTS)
		return -ERANGE;
	*ep = (__u16)v;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "/" and 16 hex digits at the end of @buf: cut off, *@nonce set.  No
 * such suffix: 0, *@nonce 0.  Malformed: -EINVAL. */
static int cut_nonce(char *buf, __u64 *nonce)
{
	char *first = strchr(buf, '/'), *last = strrchr(buf, '/');

	*nonce = 0;
	if (!first || first == last)
		return 0;
	if (strlen(last + 1) != 16)
		return -EINVAL;
	for (int i = 1; i <= 16; i++) {
		int v = hexval(last[i]);

		if (v < 0)
			return -EINVAL;
		*nonce = *nonce << 4 | (__u64)v;
	}
	*last = '\0';
	return 0;
}

XW_API int xw_addr_parse(const char *text, struct xw_addr *addr)
{
	char buf[XW_ADDR_STRLEN], *slash, *colon;
	struct xw_addr a = {};
	struct in_addr ip;
	unsigned long port;
	char *end;
	int err;

	if (!text || !addr || strlen(text) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, text);
	err = cut_nonce(buf, &a.nonce);
	if (err)
		return err;
	slash = strrchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	err = parse_ep(slash + 1, &a.ep);
	if (err)
		return err;
	if (strlen(buf) == 17 && buf[2] == ':') {
		/* MAC: six hex pairs separated by ':' */
		for (int i = 0; i < 6; i++) {
			int hi = hexval(buf[i * 3]), lo = hexval(buf[i * 3 + 1]);

			if (hi < 0 || lo < 0 || (i < 5 && buf[i * 3 + 2] != ':'))
				return -EINVAL;
			a.mac[i] = (__u8)(hi << 4 | lo);
		}
		a.encap = XW_ENCAP_ETH;
	} else {
		colon = strrchr(buf, ':');
		if (!colon)
			return -EINVAL;
		*colon = '\0';
		if (inet_pton(AF_INET, buf, &ip) != 1)
			return -EINVAL;
		if (colon[1] < '0' || colon[1] > '9')
			return -EINVAL;
		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (errno || *end || port == 0 || port > 65535)
			return -EINVAL;
		a.encap = XW_ENCAP_UDP;
		a.ip = ip.s_addr;
		a.port = htons((__u16)port);
	}
	*addr = a;
	return 0;
}

XW_API int xw_addr_format(const struct xw_addr *a, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN];
	int n;

	if (!a || !buf || a->ep >= XW_MAX_ENDPOINTS)
		return -EINVAL;
	if (a->encap == XW_ENCAP_ETH) {
		n = snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x/%u", a->mac[0], a->mac[1],
			     a->mac[2], a->mac[3], a->mac[4], a->mac[5], a->ep);
	} else if (a->encap == XW_ENCAP_UDP) {
		if (!inet_ntop(AF_INET, &a->ip, ip, sizeof(ip)))
			return -EINVAL;
		n = snprintf(buf, len, "%s:%u/%u", ip, ntohs(a->port), a->ep);
	} else {
		return -EINVAL;
	}
	if (n >= 0 && (size_t)n < len && a->nonce)
		n += snprintf(buf + n, len - (size_t)n, "/%016llx", (unsigned long long)a->nonce);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}

XW_API int xw_addr_equal(const struct xw_addr *a, const struct xw_addr *b)
{
	if (!a || !b || a->encap != b->encap || a->ep != b->ep)
		return 0;
	if (a->encap == XW_ENCAP_UDP)
		return a->ip == b->ip && a->port == b->port;
	return !memcmp(a->mac, b->mac, 6);
}
