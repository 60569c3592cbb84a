/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Internal declarations of the xdpwake command-line tool (not installed).
 *
 * Every subcommand is one entry of the table in xdpwake.c: its positional
 * arguments, its options (struct cli_opt, each with a parse function), a
 * description, and a run function.  xdpwake.c generates --help from the table,
 * parses the options with getopt_long into one struct cli_args, checks the
 * number of positional arguments, and calls run(), which returns the exit
 * status (enum cli_exit).
 */
#ifndef XW_CLI_H
#define XW_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include "xdpwake.h"
#include "json.h" /* the JSON writer of -j (userspace/util/, libxwutil) */

/* Documented exit codes. */
enum cli_exit {
	EXIT_OK = 0,		/* success                                       */
	EXIT_RUNTIME = 1,	/* a library or system call failed               */
	EXIT_USAGE = 2,		/* bad option, argument or value                 */
	EXIT_NOTFOUND = 3,	/* xdpwake not attached / nothing found          */
};

#define CLI_DEFAULT_PIN_ROOT "/sys/fs/bpf/xdpwake" /* the library's default */
#define CLI_PIN_ROOT_ENV "XDPWAKE_PIN_ROOT"

/* Endpoint selectors besides 0..XW_MAX_ENDPOINTS-1. */
#define CLI_EP_ALL (-1)			 /* every endpoint (and, for stats, the rest) */
#define CLI_EP_IFACE XW_STATS_IFACE	 /* stats: frames not attributed to an endpoint */

struct cli_args {
	/* set by options */
	const char *pin_root;	/* never NULL after parsing                    */
	enum xw_xdp_mode mode;
	bool mode_set;
	__u32 encap, ethertype, udp_port, policy;
	bool encap_set, ethertype_set, udp_port_set, policy_set;
	__u32 max_endpoints;	/* attach: 0 the library's default          */
	int ep;			/* CLI_EP_ALL, 0..1023, or CLI_EP_IFACE      */
	bool ep_set;
	double watch;		/* seconds; 0: no --watch                     */
	long count;		/* 0: unbounded                               */
	/* positional arguments */
	int npos;
	char **pos;
	/* parse error text of the last failed option */
	char err[256];
};

struct cli_opt {
	const char *name;	/* long option name                        */
	int key;		/* short option character, or >= 256       */
	const char *arg;	/* argument placeholder; NULL: no argument  */
	const char *help;
	int (*parse)(struct cli_args *a, const char *val);	/* 0 or -errno, a->err */
};

struct cli_cmd {
	const char *name;
	const char *args;	/* positional arguments, for the usage line */
	int min_pos, max_pos;	/* max_pos < 0: unlimited                  */
	const char *summary;	/* one line                                */
	const char *desc;	/* paragraph(s) of --help                  */
	const struct cli_opt *opts; /* terminated by an entry with name NULL */
	int (*run)(struct cli_args *a);
};

/* The command table and the global options (xdpwake.c), for doc.c. */
const struct cli_cmd *const *cli_commands(int *n);
const struct cli_opt *cli_global_opts(void);
/* doc.c: the man page and the README's command reference. */
int cli_doc_man(FILE *f);
int cli_doc_markdown(FILE *f);

/* Global state of the run. */
extern bool cli_json;
extern int cli_verbose;
extern const char *cli_cmd_name;	/* the running subcommand, for messages */
extern volatile int cli_stop;		/* set by SIGINT/SIGTERM */

/* ---- messages (xdpwake.c) ---- */

/* Report a failure and return @code: text on stderr, or in JSON mode
 * {"error": {"code": err, "message": ...}} on stdout.  @err is a negative
 * errno (use -EINVAL for usage errors). */
__attribute__((format(printf, 3, 4))) int cli_fail(int code, int err, const char *fmt, ...);
/* A usage error (exit 2) with a pointer to the subcommand's --help. */
__attribute__((format(printf, 1, 2))) int cli_usage(const char *fmt, ...);
/* Informational message on stderr in text mode (silent in JSON mode). */
__attribute__((format(printf, 1, 2))) void cli_note(const char *fmt, ...);

/* ---- helpers (util.c) ---- */

/* Option parsers shared by subcommands. */
int cli_parse_pin_root(struct cli_args *a, const char *val);
int cli_parse_ep(struct cli_args *a, const char *val);
int cli_parse_ep_stats(struct cli_args *a, const char *val);
/* Check an interface name argument; a usage error message otherwise. */
int cli_check_ifname(const char *ifname);
/* True if the caller may not search @pin_root (EACCES): "not attached"
 * answers from the library are then permission problems. */
bool cli_pin_root_denied(const char *pin_root);
/* Exit code 1 with a message if interface @ifname does not exist. */
int cli_require_iface(const char *ifname);
/* Parse an unsigned long in [min, max]: 0 or -EINVAL/-ERANGE. */
int cli_parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *v);

/* Format knob @idx's value as text ("stream", "eth,udp", "0x88b5", "75"). */
const char *cli_knob_text(int idx, __u32 v, char *buf, size_t len);
/* The symbolic name of a value, for knobs that have one (policy, encap,
 * lat_mask); NULL for plain numbers. */
const char *cli_knob_symbol(int idx, __u32 v, char *buf, size_t len);
/* Accepted values of knob @idx, for messages and `knobs`. */
const char *cli_knob_range(int idx, char *buf, size_t len);
/* The members "value": N and, for knobs with symbolic values, "name": "..."
 * of a knob value object that the caller opened (and closes). */
void cli_json_knob_fields(int idx, __u32 v);
/* Comma-separated list of every knob name. */
const char *cli_knob_names(char *buf, size_t len);

/* Open the xdpwake program already attached on @ifname (never attaches).
 * On failure prints the error and returns the exit code (> 0). */
int cli_open_attached(const struct cli_args *a, const char *ifname, struct xw_iface **ifc);
/* Interface names that have a directory under the pin root, sorted.
 * Returns the count (>= 0) or -errno; free with cli_free_names(). */
int cli_list_pinned(const char *pin_root, char ***names);
void cli_free_names(char **names, int n);

/* ---- n-tuple rules and device facts (ntuple.c, ethtool ioctl) ---- */

/* A rule steering UDP/IPv4 destination port @port to RX queue @queue. */
struct cli_ntuple_rule {
	__u32 loc;	/* location in the device's rule table            */
	__u16 port;
	__u32 queue;
	bool drop;	/* the rule drops instead                         */
	bool exact;	/* matches the destination port alone              */
};

struct cli_ntuple_list {
	__u32 table_size;	/* rule table size                          */
	bool loc_any;		/* the driver chooses locations itself      */
	__u32 nrules, *locs;	/* every rule's location (any kind)         */
	int n;			/* UDP destination-port rules in @rules     */
	struct cli_ntuple_rule *rules;
};

/* The device's rules: 0, or -errno (-EOPNOTSUPP: no n-tuple filters). */
int cli_ntuple_list(const char *ifname, struct cli_ntuple_list *out);
void cli_ntuple_free(struct cli_ntuple_list *l);
/* Insert "UDP/IPv4 destination port @port -> RX queue @queue" (at the
 * lowest free location of @l when the driver needs one); *@loc: where. */
int cli_ntuple_add(const char *ifname, const struct cli_ntuple_list *l, __u16 port, __u32 queue,
		   __u32 *loc);
int cli_ntuple_del(const char *ifname, __u32 loc);
/* RX queues (ethtool channels: rx + combined), or -errno. */
int cli_rx_queues(const char *ifname);
/* The driver's name (e.g. "veth"): 0 or -errno. */
int cli_driver(const char *ifname, char *buf, size_t len);

/* Monotonic time in seconds. */
double cli_now(void);

/* Options every subcommand that works on an interface takes. */
#define CLI_OPT_PIN_ROOT_KEY 0x100
#define CLI_OPT_PIN_ROOT                                                               \
	{ "pin-root", CLI_OPT_PIN_ROOT_KEY, "DIR",                                     \
	  "bpffs directory holding one directory of pinned maps per interface "       \
	  "(default $" CLI_PIN_ROOT_ENV " or " CLI_DEFAULT_PIN_ROOT ")",               \
	  cli_parse_pin_root }

/* ---- subcommands (one file each) ---- */
extern const struct cli_cmd cli_cmd_attach;
extern const struct cli_cmd cli_cmd_detach;
extern const struct cli_cmd cli_cmd_status;
extern const struct cli_cmd cli_cmd_stats;
extern const struct cli_cmd cli_cmd_set;
extern const struct cli_cmd cli_cmd_get;
extern const struct cli_cmd cli_cmd_knobs;
extern const struct cli_cmd cli_cmd_pingpong;
extern const struct cli_cmd cli_cmd_stream;
extern const struct cli_cmd cli_cmd_steer;

#endif
