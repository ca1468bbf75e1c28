#ifndef TLBLAB_CLIENT_FMT_H
#define TLBLAB_CLIENT_FMT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "jsonget.h"
#include "strbuf.h"

/*
 * What the client's views print with (client_fmt.c): fields read from the
 * server's JSON, tables, values and times as text. Below the HTTP client
 * (client_http.c) and every command's view; everything the server sent is
 * cleaned of control characters before it reaches the terminal. Fields
 * are read with jsonget.h, which tolerates a server that sends the wrong
 * type.
 */

/*
 * A table of text cells printed with aligned columns. Cells are copied,
 * with control characters replaced and long cells cut, so server strings
 * are safe to print.
 */
struct table {
	size_t ncols;
	const char *const *heads;	/* borrowed, ncols entries */
	const char *align;		/* borrowed, 'l' or 'r' per column */
	size_t nrows, alloc;
	char **cells;			/* nrows * ncols, owned */
};

void client_table_init(struct table *t, size_t ncols, const char *const *heads,
		const char *align);
/* Adds a row of ncols cells; NULL prints as "-". */
void client_table_add_row(struct table *t, const char *const *cells);
void client_table_print(const struct table *t, FILE *out, const char *indent);
void client_table_release(struct table *t);

/* jsonget_str(), or fallback when the string is absent or empty. */
const char *client_jstr_or(const json_t *obj, const char *key, const char *fallback);
/* Appends the strings of the JSON array arr to sb, sep between them. */
void client_join_strings(struct strbuf *sb, const json_t *arr, const char *sep);
/* What a job took from the lab's defaults ({field: value}) as "suite tlb,
 * tree linux"; nothing when it took none. Not cleaned. */
void client_join_defaults(struct strbuf *sb, const json_t *taken);
/* A JSON value for a person: strings bare, numbers by client_fmt_number(), "-"
 * for null or absent, anything else as compact JSON. Not cleaned. */
void client_add_json_value(struct strbuf *sb, const json_t *v);
/* "mode=threads workers=2": the members of a parameters object, in its
 * order, leaving out the member named skip (may be NULL). Not cleaned. */
void client_add_params(struct strbuf *sb, const json_t *params, const char *skip);

/* Formatting into a caller's buffer of at least FMT_SIZE bytes; each
 * returns buf. */
#define FMT_SIZE 64
/* "2024-05-01 12:03:04" in local time, or "-" when absent. */
char *client_fmt_time(char *buf, const json_t *obj, const char *key);
/* A metric value: integers exactly, others with sensible precision. */
char *client_fmt_number(char *buf, double v);
/* Copies s into buf (size n) with control characters made harmless. */
char *client_fmt_clean(char *buf, size_t n, const char *s);
/* How long obj ("started", "finished") took, or so far when it has not
 * finished; "-" when it has not started. */
char *client_fmt_span(char *buf, const json_t *obj);
/* The integer at key, or "-". */
char *client_fmt_id(char *buf, const json_t *obj, const char *key);

#endif
