/*
 * The registry of metric classes (daemon/analysis/compare_class.h): a
 * class is one row its own file registers, and the registry alone says
 * which class claims a metric, in one order whatever order the files link
 * in. A binary of its own: the last test registers a name twice, which
 * breaks the registry for the rest of the process, as it would a daemon.
 */
#include "testlib.h"

#include <math.h>
#include <string.h>

#include "compare.h"
#include "compare_class.h"
#include "compare_rules.h"
#include "fixture_compare.h"
#include "jsonget.h"
#include "util.h"
#include "banned.h"

static const char *class_name(const char *workload, const char *metric)
{
	const struct compare_class *c = compare_class_of(workload, metric, NULL, NULL);

	return c ? c->name : "(none)";
}

/* the shipped classes, each from its file, in list order */
static void test_shipped(void **state)
{
	static const char *const names[] = { "work", "wait", "time", "context" };
	struct strbuf table = STRBUF_INIT, err = STRBUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(compare_class_registry_errors(&err), 0);
	assert_int_equal(compare_class_count(), ARRAY_SIZE(names));
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		assert_string_equal(compare_class_at(i)->name, names[i]);
		assert_ptr_equal(compare_class_find(names[i]), compare_class_at(i));
		assert_int_equal(compare_class_index(compare_class_at(i)), (int)i);
	}
	assert_null(compare_class_at(i));
	assert_null(compare_class_find("toy"));
	/* the legend is each row's, joined: what the report and the page show */
	assert_true(!strncmp(compare_class_legend(), "work: instructions per operation", 32));
	assert_non_null(strstr(compare_class_legend(), "; wait: spin-wait instructions; time: clock time"));
	/* the table docs/statistics.md shows: a line per class, from its row */
	compare_class_table(&table);
	assert_non_null(strstr(table.buf, "\n| wait | spin-wait instructions | `*.spin_insn_per_op` | Welch's t"));
	assert_non_null(strstr(table.buf, "`min_change_headline`, in a suite `min_change`"));
	assert_non_null(strstr(table.buf, "every metric no other class claims | no | no | - |\n"));
	strbuf_release(&table);
	strbuf_release(&err);
}

/* a metric no claim takes is context, as is no metric at all; the most
 * specific claim wins whichever file made it */
static void test_unclaimed(void **state)
{
	(void)state;
	assert_string_equal(class_name("mprotect", "foo.bar"), "context");
	assert_string_equal(class_name("mprotect", "interrupts.TLB"), "context");
	assert_string_equal(class_name(NULL, "x"), "context");
	assert_string_equal(compare_class_of("mprotect", NULL, NULL, NULL)->name, "context");
	/* wait's .spin_insn_per_op is longer than work's _insn_per_op */
	assert_string_equal(class_name("mremap", "mremap.spin_insn_per_op"), "wait");
	assert_string_equal(class_name("mremap", "mremap.kernel_insn_per_op"), "work");
	/* context's kfunc.*.calls before time's kfunc.* */
	assert_string_equal(class_name("mprotect", "kfunc.f.calls"), "context");
	assert_string_equal(class_name("mprotect", "kfunc.f.ns_per_call"), "time");
	/* a suffix before a prefix: work's _per_op before time's kfunc. */
	assert_string_equal(class_name("mprotect", "kfunc.f.calls_per_op"), "work");
}

/* the rules carry each class's margins under its keys, and the classes */
static void test_rules(void **state)
{
	const char *keys[16];
	struct compare_rules r;
	size_t n, i;
	json_t *j, *c;

	(void)state;
	compare_rules_default(&r);
	assert_float_equal(compare_rules_get(&r, "min_change_work"), 0.01, 1e-12);
	assert_float_equal(compare_rules_get(&r, "min_change_wait"), 0.05, 1e-12);
	assert_float_equal(compare_rules_get(&r, "min_change_headline"), 0.02, 1e-12);
	/* a suite writes the time class's least change as min_change */
	assert_ptr_equal(compare_rules_slot(&r, "min_change"), compare_rules_slot(&r, "min_change_headline"));
	assert_true(isnan(compare_rules_get(&r, "min_change_toy")));
	n = compare_rules_suite_keys(keys, ARRAY_SIZE(keys));
	assert_int_equal(n, 7);
	assert_string_equal(keys[0], "min_change_work");
	assert_string_equal(keys[4], "min_change");
	/* work's counters take its one least change; time's have their own */
	*compare_rules_slot(&r, "min_change_work") = 0.03;
	assert_float_equal(compare_rules_margin_pct(&r, compare_class_find("work"), COMPARE_MIN_CHANGE, 0), 3,
			   1e-9);
	assert_float_equal(compare_rules_margin_pct(&r, compare_class_find("time"), COMPARE_MIN_CHANGE, 0), 5,
			   1e-9);
	j = compare_rules_json(&r);
	assert_float_equal(jsonget_num_or(j, "min_change_work", 0), 0.03, 1e-12);
	assert_int_equal(json_array_size(json_object_get(j, "classes")), 4);
	json_array_foreach(json_object_get(j, "classes"), i, c) {
		const struct compare_class *k = compare_class_at(i);

		assert_string_equal(jsonget_str(c, "name"), k->name);
		assert_string_equal(jsonget_str(c, "legend"), k->legend);
		assert_int_equal(json_is_true(json_object_get(c, "tested")), !!(k->flags & COMPARE_CLASS_TESTED));
		assert_int_equal(json_is_null(json_object_get(c, "margins")), !(k->flags & COMPARE_CLASS_TESTED));
	}
	c = json_array_get(json_object_get(j, "classes"), 0);
	assert_float_equal(jsonget_num_or(json_object_get(c, "margins"), "min_change_counter", 0), 0.03, 1e-12);
	assert_string_equal(jsonget_str(json_object_get(json_object_get(c, "margins"), "keys"), "min_change_counter"),
			    "min_change_work");
	json_decref(j);
}

/* what registered twice is refused, naming both places; a comparison
 * then refuses to go on, as every configuration load does */
static const struct compare_claim again_claims[] = {
	{ COMPARE_CLAIM_NAME, NULL, "_per_op" },
};
static const struct compare_class class_again = {
	.name = "work", .legend = "a second work", .order = 99, .flags = COMPARE_CLASS_TESTED,
};
static const struct compare_class class_claims_again = {
	.name = "again", .legend = "claims what work claims", .order = 98, .flags = COMPARE_CLASS_TESTED,
	.claims = again_claims, .nclaims = 1,
};

static void test_twice(void **state)
{
	struct strbuf err = STRBUF_INIT;
	const char *first;
	json_t *doc = doc_new();
	const double v[] = { 1, 2, 3 };

	(void)state;
	compare_class_register(&class_again, "daemon/analysis/class_again.c", 7);
	compare_class_register(&class_claims_again, "daemon/analysis/class_claims.c", 9);
	assert_int_equal(compare_class_registry_errors(&err), -1);
	first = strstr(err.buf, "daemon/analysis/class_again.c:7: class 'work' registered twice (first at "
			       "daemon/analysis/class_work.c:");
	if (!first)
		fail_msg("no line for the name twice in: %s", err.buf);
	assert_non_null(strstr(err.buf, "daemon/analysis/class_claims.c:9: class 'again' claims `*_per_op`, "
				       "which class 'work' claims (at daemon/analysis/class_work.c:"));
	/* the first registration stands: lookups still answer */
	assert_string_equal(compare_class_find("work")->legend, compare_class_at(0)->legend);
	strbuf_reset(&err);
	add_values_unit(doc, "base", "a", "mprotect.ops_per_sec", v, 3, "higher", "ops/s");
	add_values_unit(doc, "patched", "b", "mprotect.ops_per_sec", v, 3, "higher", "ops/s");
	assert_null(compare_sides(doc, "base", doc, "patched", NULL, &err));
	assert_non_null(strstr(err.buf, "compare: daemon/analysis/class_again.c:7: class 'work' registered twice"));
	json_decref(doc);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_unclaimed),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_twice),	/* last: it breaks the registry */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
