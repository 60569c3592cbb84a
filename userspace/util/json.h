/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A small JSON writer on stdout (libxwutil, not installed): compact, one
 * document per line (a newline and a flush after the outermost value),
 * commas placed by the writer, strings escaped, non-finite numbers as null.
 * The tool's -j output uses it.
 */
#ifndef XW_UTIL_JSON_H
#define XW_UTIL_JSON_H

#include <stdbool.h>
#include <stdio.h>

void json_obj_begin(void);
void json_obj_end(void);
void json_arr_begin(void);
void json_arr_end(void);
void json_key(const char *key);
void json_str(const char *s);
void json_u64(unsigned long long v);
void json_i64(long long v);
void json_double(double v);
void json_bool(bool v);
void json_null(void);
void json_kv_str(const char *key, const char *s);
void json_kv_u64(const char *key, unsigned long long v);
void json_kv_i64(const char *key, long long v);
void json_kv_double(const char *key, double v);
void json_kv_bool(const char *key, bool v);
/* Write a string with JSON escaping (quotes included) to @f. */
void json_escape(FILE *f, const char *s);

#endif
