/*
 * A statement's parameters and columns, as the store's types: each a call
 * of the statement's backend (store_backend.h), and JSON made of them.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "banned.h"

void db_bind_int(struct db_stmt *s, int i, int64_t v)
{
	if (s)
		s->be->bind_int(s, i, v);
}

void db_bind_real(struct db_stmt *s, int i, double v)
{
	if (s)
		s->be->bind_real(s, i, v);
}

void db_bind_text(struct db_stmt *s, int i, const char *v)
{
	if (s)
		s->be->bind_text(s, i, v, v ? strlen(v) : 0);
}

void db_bind_bytes(struct db_stmt *s, int i, const char *v)
{
	if (s)
		s->be->bind_bytes(s, i, v, v ? strlen(v) : 0);
}

void db_bind_json(struct db_stmt *s, int i, const json_t *v)
{
	char *txt = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	db_bind_text(s, i, txt);
	free(txt);
}

void db_bind_args(struct db_stmt *s, const struct db_arg *args)
{
	int i;

	for (i = 0; s && args[i].kind != DB_ARG_MAX; i++) {
		switch (args[i].kind) {
		case DB_ARG_INT:
			db_bind_int(s, i + 1, args[i].v.i);
			break;
		case DB_ARG_REAL:
			db_bind_real(s, i + 1, args[i].v.d);
			break;
		case DB_ARG_TEXT:
			db_bind_text(s, i + 1, args[i].v.t);
			break;
		case DB_ARG_JSON:
			db_bind_json(s, i + 1, args[i].v.j);
			break;
		case DB_ARG_BYTES:
			db_bind_bytes(s, i + 1, args[i].v.t);
			break;
		case DB_ARG_MAX:
			break;
		}
	}
}

enum db_type db_col_type(struct db_stmt *s, int i)
{
	return s->be->col_type(s, i);
}

int64_t db_col_int64(struct db_stmt *s, int i)
{
	return s->be->col_int(s, i);
}

int db_col_int(struct db_stmt *s, int i)
{
	return (int)s->be->col_int(s, i);
}

double db_col_double(struct db_stmt *s, int i)
{
	return s->be->col_real(s, i);
}

const char *db_col_text(struct db_stmt *s, int i)
{
	return s->be->col_text(s, i);
}

size_t db_col_bytes(struct db_stmt *s, int i)
{
	return s->be->col_bytes(s, i);
}

json_t *db_col_json(struct db_stmt *s, int i)
{
	switch (db_col_type(s, i)) {
	case DB_T_INT: return json_integer(db_col_int64(s, i));
	case DB_T_REAL: return json_real(db_col_double(s, i));
	case DB_T_TEXT: return json_string(db_col_text(s, i));
	default: return json_null();
	}
}

json_t *db_col_parsed(struct db_stmt *s, int i)
{
	const char *t = db_col_text(s, i);
	json_t *v;

	/* most jobs' machines and tags: no parser for them */
	if (t && !strcmp(t, "[]"))
		return json_array();
	v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	return v ? v : json_null();
}

void db_col_copy(char *buf, size_t len, struct db_stmt *s, int i)
{
	const char *t = db_col_text(s, i);

	snprintf(buf, len, "%s", t ? t : "");
}
