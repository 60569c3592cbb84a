// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A small JSON writer (json.h), the tool's -j output: compact, one document per
 * line, strings escaped (control characters as \uXXXX, invalid UTF-8 as
 * U+FFFD), non-finite numbers as null.  It keeps a stack of "first element"
 * flags to place the commas; nesting deeper than JSON_MAX_DEPTH is a bug in
 * the caller and is clamped rather than overflowing.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

#define JSON_MAX_DEPTH 32

static int depth;
static bool first[JSON_MAX_DEPTH + 1];
static bool after_key;

/* Comma and bookkeeping before any value or key. */
static void json_sep(void)
{
	if (after_key) {
		after_key = false;
		return;
	}
	if (depth > 0) {
		if (!first[depth])
			putchar(',');
		first[depth] = false;
	}
}

static void json_open(char c)
{
	json_sep();
	putchar(c);
	if (depth < JSON_MAX_DEPTH)
		depth++;
	first[depth] = true;
}

static void json_close(char c)
{
	putchar(c);
	if (depth > 0)
		depth--;
	if (depth == 0) {
		putchar('\n');
		fflush(stdout);
	}
}

void json_obj_begin(void)
{
	json_open('{');
}

void json_obj_end(void)
{
	json_close('}');
}

void json_arr_begin(void)
{
	json_open('[');
}

void json_arr_end(void)
{
	json_close(']');
}

/* Length of the valid UTF-8 sequence at @s, or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
	int n;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void json_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', f);
	while (*s) {
		int n;

		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				fprintf(f, "\\u%04x", *s);
				break;
			}
			n = utf8_len(s);
			if (!n) {
				fputs("\\ufffd", f);
				break;
			}
			fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		s++;
	}
	fputc('"', f);
}

void json_key(const char *key)
{
	json_sep();
	json_escape(stdout, key);
	putchar(':');
	after_key = true;
}

void json_str(const char *s)
{
	json_sep();
	if (s)
		json_escape(stdout, s);
	else
		fputs("null", stdout);
}

void json_u64(unsigned long long v)
{
	json_sep();
	printf("%llu", v);
}

void json_i64(long long v)
{
	json_sep();
	printf("%lld", v);
}

void json_double(double v)
{
	json_sep();
	if (isfinite(v))
		printf("%.10g", v);
	else
		fputs("null", stdout);
}

void json_bool(bool v)
{
	json_sep();
	fputs(v ? "true" : "false", stdout);
}

void json_null(void)
{
	json_sep();
	fputs("null", stdout);
}

void json_kv_str(const char *key, const char *s)
{
	json_key(key);
	json_str(s);
}

void json_kv_u64(const char *key, unsigned long long v)
{
	json_key(key);
	json_u64(v);
}

void json_kv_i64(const char *key, long long v)
{
	json_key(key);
	json_i64(v);
}

void json_kv_double(const char *key, double v)
{
	json_key(key);
	json_double(v);
}

void json_kv_bool(const char *key, bool v)
{
	json_key(key);
	json_bool(v);
}
