#include "jsonget.h"

#include <math.h>

#include "banned.h"

/* obj's member key, or NULL (for a NULL obj or key too) */
static json_t *member(const json_t *obj, const char *key)
{
	return json_is_object(obj) && key ? json_object_get(obj, key) : NULL;
}

const char *jsonget_str(const json_t *obj, const char *key)
{
	const json_t *v = member(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int jsonget_int(const json_t *obj, const char *key, long long *ret)
{
	const json_t *v = member(obj, key);

	if (!json_is_integer(v))
		return -1;
	*ret = (long long)json_integer_value(v);
	return 0;
}

long long jsonget_int_or(const json_t *obj, const char *key, long long def)
{
	long long v;

	return jsonget_int(obj, key, &v) == 0 ? v : def;
}

int jsonget_num(const json_t *obj, const char *key, double *ret)
{
	const json_t *v = member(obj, key);

	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return -1;
	*ret = json_number_value(v);
	return 0;
}

double jsonget_num_or(const json_t *obj, const char *key, double def)
{
	double v;

	return jsonget_num(obj, key, &v) == 0 ? v : def;
}

json_t *jsonget_array(const json_t *obj, const char *key)
{
	json_t *v = member(obj, key);

	return json_is_array(v) ? v : NULL;
}
