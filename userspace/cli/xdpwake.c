// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdpwake - operate the xdpwake XDP wake engine.
 *
 *   xdpwake [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]
 *
 * Subcommands are table-driven (struct cli_cmd): this file generates the
 * usage text and --help of each from its table, parses options with
 * getopt_long, and reports errors (as text on stderr, or as JSON on stdout
 * with -j).  Exit codes: 0 ok, 1 runtime error, 2 usage error, 3 not
 * attached / not found.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "cli.h"

#ifndef XW_VERSION_STR
#define XW_VERSION_STR "unknown"
#endif

#define KEY_JSON 'j'
#define KEY_VERBOSE 'v'
#define KEY_HELP 'h'
#define KEY_VERSION 0x1ff

bool cli_json;
int cli_verbose;
const char *cli_cmd_name;
volatile int cli_stop;

static const struct cli_opt global_opts[] = {
	{ "json", KEY_JSON, NULL, "JSON output on stdout (errors too: {\"error\": {...}})" },
	{ "verbose", KEY_VERBOSE, NULL,
	  "more messages on stderr: -v warnings and progress, -vv debug (libbpf, libxdp)" },
	{ "help", KEY_HELP, NULL, "show this help and exit" },
	{ NULL },
};

static int cmd_help(struct cli_args *a);

static int help_format; /* 0 text, 1 man, 2 markdown */

static int parse_man(struct cli_args *a, const char *v)
{
	(void)a;
	(void)v;
	help_format = 1;
	return 0;
}

static int parse_markdown(struct cli_args *a, const char *v)
{
	(void)a;
	(void)v;
	help_format = 2;
	return 0;
}

static const struct cli_cmd cli_cmd_help = {
	.name = "help",
	.args = "[COMMAND]",
	.min_pos = 0,
	.max_pos = 1,
	.summary = "help of the tool or of one command",
	.desc = "Show the list of commands, or the help of COMMAND (same as "
		"`xdpwake COMMAND --help`). With --man, the whole manual page (roff); with "
		"--markdown, the README's command reference: both come from the same table "
		"as --help.",
	.opts = (const struct cli_opt[]){
		{ "man", 256 + 90, NULL, "write the manual page (roff) to stdout", parse_man },
		{ "markdown", 256 + 91, NULL, "write the README command reference to stdout",
		  parse_markdown },
		{ NULL } },
	.run = cmd_help,
};

static const struct cli_cmd *const commands[] = {
	&cli_cmd_attach, &cli_cmd_detach, &cli_cmd_status, &cli_cmd_stats,
	&cli_cmd_set,	 &cli_cmd_get,	  &cli_cmd_knobs,  &cli_cmd_pingpong,
	&cli_cmd_stream, &cli_cmd_steer, &cli_cmd_help,
};
#define NR_COMMANDS (int)(sizeof(commands) / sizeof(commands[0]))

static const char exit_codes_text[] =
	"Exit status: 0 success; 1 runtime error (a library or system call failed);\n"
	"2 usage error (bad option, argument or value); 3 xdpwake not attached or\n"
	"not found.\n";

/* ---- messages ------------------------------------------------------- */

static void emit_error(int err, const char *msg)
{
	if (cli_json) {
		json_obj_begin();
		json_key("error");
		json_obj_begin();
		json_kv_i64("code", err > 0 ? -err : err);
		json_kv_str("message", msg);
		json_obj_end();
		json_obj_end();
	} else {
		fflush(stdout);
		fprintf(stderr, "xdpwake%s%s: %s\n", cli_cmd_name ? " " : "",
			cli_cmd_name ? cli_cmd_name : "", msg);
	}
}

int cli_fail(int code, int err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit_error(err, msg);
	return code;
}

int cli_usage(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit_error(-EINVAL, msg);
	if (!cli_json)
		fprintf(stderr, "Try 'xdpwake %s%s--help'.\n",
			cli_cmd_name ? cli_cmd_name : "", cli_cmd_name ? " " : "");
	return EXIT_USAGE;
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	if (cli_json)
		return;
	fflush(stdout);
	fputs("xdpwake: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void log_cb(enum xw_log_level level, const char *msg, void *ctx)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };

	fflush(stdout);
	fprintf(stderr, "libxdpwake: %s: %s\n",
		(unsigned int)level < 4 ? names[level] : "log", msg);
}

/* ---- help ----------------------------------------------------------- */

/* Print @text wrapped at 79 columns; continuation lines start at @indent,
 * the first line continues at column @col. */
static void print_wrapped(FILE *f, const char *text, int col, int indent)
{
	const char *p = text;

	while (*p) {
		const char *w = p;
		int len;

		while (*w == ' ')
			w++;
		len = strcspn(w, " \n");
		if (col > indent && col + 1 + len > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(w, 1, len, f);
		col += len;
		p = w + len;
		if (*p == '\n') {
			fputc('\n', f);
			if (p[1] == '\n') {
				fputc('\n', f);
				p++;
			}
			p++;
			fprintf(f, "%*s", indent, "");
			col = indent;
		}
	}
	fputc('\n', f);
}

static void print_opt(FILE *f, const struct cli_opt *o)
{
	char head[64];
	int n;

	if (o->key < 0x100)
		n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->key, o->name,
			     o->arg ? " " : "", o->arg ? o->arg : "");
	else
		n = snprintf(head, sizeof(head), "      --%s%s%s", o->name, o->arg ? " " : "",
			     o->arg ? o->arg : "");
	fputs(head, f);
	if (n >= 28) {
		fprintf(f, "\n%*s", 28, "");
		n = 28;
	} else {
		fprintf(f, "%*s", 28 - n, "");
		n = 28;
	}
	print_wrapped(f, o->help, n, 28);
}

static void print_cmd_help(FILE *f, const struct cli_cmd *c)
{
	bool has_opts = c->opts && c->opts[0].name;

	fprintf(f, "Usage: xdpwake %s%s%s%s\n\n", c->name, has_opts ? " [OPTIONS]" : "",
		c->args[0] ? " " : "", c->args);
	fprintf(f, "%c%s.\n\n", toupper((unsigned char)c->summary[0]), c->summary + 1);
	fputs("  ", f);
	print_wrapped(f, c->desc, 2, 2);
	if (has_opts) {
		fputs("\nOptions:\n", f);
		for (const struct cli_opt *o = c->opts; o->name; o++)
			print_opt(f, o);
	}
	fputs("\nGlobal options (also accepted before the command):\n", f);
	for (const struct cli_opt *o = global_opts; o->name; o++)
		print_opt(f, o);
	fputc('\n', f);
	fputs(exit_codes_text, f);
}

static void print_main_help(FILE *f)
{
	fputs("Usage: xdpwake [-j] [-v[v]] COMMAND [OPTIONS] [ARGS]\n"
	      "       xdpwake COMMAND --help\n"
	      "       xdpwake --version\n\n"
	      "Operate xdpwake, the XDP program that decides when a process waiting for\n"
	      "messages on an AF_XDP socket is woken: attach and detach it, show its\n"
	      "status and statistics, read or change its knobs while it runs, and\n"
	      "measure message latency, rate, wakes and CPU per message between two hosts.\n\n"
	      "Commands:\n",
	      f);
	for (int i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "  %-8s %-19s %s\n", commands[i]->name, commands[i]->args,
			commands[i]->summary);
	fputs("\nGlobal options:\n", f);
	for (const struct cli_opt *o = global_opts; o->name; o++)
		print_opt(f, o);
	print_opt(f, &(struct cli_opt){ "version", KEY_VERSION, NULL,
					"show the versions of the tool and libraries" });
	fputs("\nEnvironment: " CLI_PIN_ROOT_ENV " sets the default --pin-root.\n\n", f);
	fputs(exit_codes_text, f);
}

static void print_version(void)
{
	char lb[32];

	snprintf(lb, sizeof(lb), "%u.%u", libbpf_major_version(), libbpf_minor_version());
	if (cli_json) {
		json_obj_begin();
		json_kv_str("xdpwake", XW_VERSION_STR);
		json_kv_str("libxdpwake", xw_version());
		json_kv_str("libbpf", lb);
		json_obj_end();
	} else {
		printf("xdpwake %s (libxdpwake %s, libbpf %s)\n", XW_VERSION_STR, xw_version(),
		       lb);
	}
}

static const struct cli_cmd *find_cmd(const char *name)
{
	for (int i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(name, commands[i]->name))
			return commands[i];
	return NULL;
}

const struct cli_cmd *const *cli_commands(int *n)
{
	*n = NR_COMMANDS;
	return commands;
}

const struct cli_opt *cli_global_opts(void)
{
	return global_opts;
}

static int cmd_help(struct cli_args *a)
{
	const struct cli_cmd *c;

	if (help_format == 1)
		return cli_doc_man(stdout) ? EXIT_RUNTIME : EXIT_OK;
	if (help_format == 2)
		return cli_doc_markdown(stdout) ? EXIT_RUNTIME : EXIT_OK;
	if (!a->npos) {
		print_main_help(stdout);
		return EXIT_OK;
	}
	c = find_cmd(a->pos[0]);
	if (!c)
		return cli_usage("unknown command '%s'", a->pos[0]);
	print_cmd_help(stdout, c);
	return EXIT_OK;
}

/* ---- option parsing ------------------------------------------------- */

static int count_opts(const struct cli_opt *o)
{
	int n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

/* getopt_long tables for @c's options plus the global ones. */
static void build_getopt(const struct cli_cmd *c, struct option *lo, char *so, size_t so_len)
{
	const struct cli_opt *sets[2] = { c ? c->opts : NULL, global_opts };
	size_t sn = 0;
	int n = 0;

	so[sn++] = ':';
	for (int s = 0; s < 2; s++) {
		for (const struct cli_opt *o = sets[s]; o && o->name; o++) {
			lo[n++] = (struct option){ o->name,
						   o->arg ? required_argument : no_argument,
						   NULL, o->key };
			if (o->key < 0x100 && sn + 3 < so_len) {
				so[sn++] = (char)o->key;
				if (o->arg)
					so[sn++] = ':';
			}
		}
	}
	so[sn] = '\0';
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
}

static const struct cli_opt *opt_by_key(const struct cli_cmd *c, int key)
{
	for (const struct cli_opt *o = c->opts; o && o->name; o++)
		if (o->key == key)
			return o;
	return NULL;
}

/* Message for the option getopt complained about (@key is ':' or '?'). */
static int bad_option(const struct cli_cmd *c, int key, char **argv)
{
	const char *text = argv[optind - 1];
	char name[64];

	if (!strncmp(text, "--", 2)) {
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(text, "="), text);
		if (key == ':')
			return cli_usage("option '%s' needs an argument", name);
		for (int s = 0; s < 2; s++)
			for (const struct cli_opt *o = s ? global_opts : (c ? c->opts : NULL);
			     o && o->name; o++)
				if (!strcmp(o->name, name + 2) && strchr(text, '=') && !o->arg)
					return cli_usage("option '%s' takes no argument", name);
		return cli_usage("unknown or ambiguous option '%s'", name);
	}
	if (key == ':')
		return cli_usage("option '-%c' needs an argument", optopt);
	return cli_usage("unknown option '-%c'", optopt);
}

static int parse_cmd(const struct cli_cmd *c, int argc, char **argv, struct cli_args *a)
{
	int n = count_opts(c->opts) + count_opts(global_opts);
	struct option lo[n + 1];
	char so[2 * n + 2];
	bool help = false;
	int key, err;

	build_getopt(c, lo, so, sizeof(so));
	opterr = 0;
	optind = 0; /* full re-initialisation (GNU) */
	while ((key = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const struct cli_opt *o;

		switch (key) {
		case KEY_JSON:
			cli_json = true;
			break;
		case KEY_VERBOSE:
			cli_verbose++;
			break;
		case KEY_HELP:
			help = true;
			break;
		case ':':
		case '?':
			return bad_option(c, key, argv);
		default:
			o = opt_by_key(c, key);
			if (!o || !o->parse)
				return cli_usage("unknown option");
			a->err[0] = '\0';
			err = o->parse(a, optarg);
			if (err)
				return cli_usage("--%s: %s", o->name,
						 a->err[0] ? a->err : "invalid value");
		}
	}
	if (help) {
		print_cmd_help(stdout, c);
		exit(EXIT_OK);
	}
	a->pos = argv + optind;
	a->npos = argc - optind;
	if (a->npos < c->min_pos)
		return cli_usage("missing argument: %s", c->args);
	if (c->max_pos >= 0 && a->npos > c->max_pos)
		return cli_usage("unexpected argument '%s'", a->pos[c->max_pos]);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option glo[] = {
		{ "json", no_argument, NULL, KEY_JSON },
		{ "verbose", no_argument, NULL, KEY_VERBOSE },
		{ "help", no_argument, NULL, KEY_HELP },
		{ "version", no_argument, NULL, KEY_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_args a = { .mode = XW_MODE_AUTO, .ep = CLI_EP_ALL };
	const struct cli_cmd *c;
	bool help = false, version = false;
	int key, rc;

	opterr = 0;
	while ((key = getopt_long(argc, argv, "+:jvh", glo, NULL)) != -1) {
		switch (key) {
		case KEY_JSON:
			cli_json = true;
			break;
		case KEY_VERBOSE:
			cli_verbose++;
			break;
		case KEY_HELP:
			help = true;
			break;
		case KEY_VERSION:
			version = true;
			break;
		default:
			return bad_option(NULL, key, argv);
		}
	}
	if (version) {
		print_version();
		return EXIT_OK;
	}
	if (help) {
		print_main_help(stdout);
		return EXIT_OK;
	}
	if (optind >= argc) {
		if (cli_json)
			return cli_usage("missing command");
		print_main_help(stderr);
		return EXIT_USAGE;
	}
	c = find_cmd(argv[optind]);
	if (!c)
		return cli_usage("unknown command '%s' (commands: attach, detach, status, "
				 "stats, set, get, knobs, pingpong, stream, help)",
				 argv[optind]);
	cli_cmd_name = c->name;

	a.pin_root = getenv(CLI_PIN_ROOT_ENV);
	if (!a.pin_root || !*a.pin_root)
		a.pin_root = CLI_DEFAULT_PIN_ROOT;
	rc = parse_cmd(c, argc - optind, argv + optind, &a);
	if (rc)
		return rc;

	xw_set_log(log_cb, NULL,
		   cli_verbose >= 2 ? XW_LOG_DEBUG : cli_verbose ? XW_LOG_INFO : XW_LOG_ERROR);
	rc = c->run(&a);
	fflush(stdout);
	return rc;
}
