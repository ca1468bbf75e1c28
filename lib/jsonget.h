#ifndef TLBLAB_JSONGET_H
#define TLBLAB_JSONGET_H

#include <jansson.h>

/*
 * A member of a JSON object (jansson), read as the type the caller
 * expects: the one way the daemon, the client and the agent read a
 * document. Any obj may be given: one that is NULL or not an object, a
 * key it lacks, or a member of another type all give the getter's
 * "absent" answer (NULL, -1 or def), never an error, so a document from
 * outside (an agent's line, an API body, a stored row) is read without a
 * type check before each member. What a getter returns belongs to obj,
 * as json_object_get's borrowed reference does.
 *
 * jsonget_str(o, k) is json_string_value(json_object_get(o, k)), and
 * jsonget_int_or(o, k, 0) json_integer_value(json_object_get(o, k)).
 */

/* The string at key, or NULL. */
const char *jsonget_str(const json_t *obj, const char *key);

/* The integer at key in *ret: 0, or -1 with *ret untouched (a real such
 * as 2.0 is not an integer). */
int jsonget_int(const json_t *obj, const char *key, long long *ret);

/* The integer at key, or def. */
long long jsonget_int_or(const json_t *obj, const char *key, long long def);

/* The number at key (an integer or a real, finite) in *ret: 0, or -1 with
 * *ret untouched. */
int jsonget_num(const json_t *obj, const char *key, double *ret);

/* The number at key, or def. */
double jsonget_num_or(const json_t *obj, const char *key, double def);

/* The array at key, or NULL. */
json_t *jsonget_array(const json_t *obj, const char *key);

#endif
