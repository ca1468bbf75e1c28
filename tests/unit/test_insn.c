/*
 * daemon/insn: the QEMU plugin's marker file turned into instruction
 * counts per operation. The file is shaped as agents/qemu-plugin/insn.c
 * writes it: a header, then "B|E SEQ VCPU KERNEL USER SPIN" per marker,
 * counts summed over the vCPUs and only growing.
 */
#include "testlib.h"

#include <math.h>

#include "insn.h"
#include "jsonget.h"
#include "util.h"
#include "banned.h"

static const char two_specs[] =
	"# tlblab-insn 1 target=x86_64 vcpus=2\n"
	/* spec 1: one window */
	"B 1 0 1000 500 10\n"
	"E 2 0 3000 700 30\n"
	/* spec 2: two windows */
	"B 3 1 4000 800 30\n"
	"E 4 0 6000 900 50\n"
	"B 5 0 7000 1000 50\n"
	"E 6 1 10000 1300 80\n";

/*
 * One window of each column set the plugin added since, the tests' inputs:
 * host_clock, the emulator's wall-clock and CPU ns; tlb_on, the TLB
 * model's misses, losses and invalidations received; tlb_unavailable, a
 * model that could not count and says why; vcpu_tlb, each vCPU's TLB
 * counts; vcpu_insn, each vCPU's TLB counts and instructions.
 */
static const char host_clock[] =
	"# tlblab-insn 1 target=x86_64 vcpus=2\n"
	"B 1 0 1000 500 10 5000000 100000\n"
	"E 2 1 3000 700 30 9000000 2100000\n";
static const char tlb_on[] =
	"# tlblab-insn 1 target=aarch64 vcpus=2 tlb=64x4,64x8,1536x12\n"
	"B 1 0 1000 500 10 5000000 100000 40 8 2 0\n"
	"E 2 1 3000 700 30 9000000 2100000 240 16 402 100\n";
static const char tlb_unavailable[] =
	"# tlblab-insn 1 target=x86_64 vcpus=2 tlb=64x4,64x8,1536x12\n"
	"# tlb unavailable: QEMU gives no registers\n"
	"B 1 0 1000 500 10 5000000 100000\n"
	"E 2 1 3000 700 30 9000000 2100000\n";
static const char vcpu_tlb[] =
	"# tlblab-insn 1 target=aarch64 vcpus=2 tlb=64x4,64x8,1536x12\n"
	"B 1 0 1000 500 10 5000000 100000 40 8 2 0 v0=30,4,2,0 v1=10,4,0,0\n"
	"E 2 1 3000 700 30 9000000 2100000 240 16 402 100 v0=40,8,2,100 v1=200,8,400,0\n";
static const char vcpu_insn[] =
	"# tlblab-insn 1 target=aarch64 vcpus=2 tlb=64x4,64x8,1536x12\n"
	"B 1 0 1000 500 10 5000000 100000 40 8 2 0 v0=30,4,2,0,600,300,10 v1=10,4,0,0,400,200,0\n"
	"E 2 1 9000 900 30 9000000 2100000 240 16 402 100 v0=40,8,2,100,700,400,10 "
	"v1=200,8,400,0,8300,500,20\n";

/* What a test works on: the windows read last, the error, and the three
 * objects insn_metrics fills. insn_setup makes it, insn_teardown frees it
 * (so a failed assertion leaks nothing either). */
struct insn_fx {
	struct strbuf err;
	struct insn_window *w;
	size_t n;
	json_t *metrics, *info, *unavailable;
};

static int insn_setup(void **state)
{
	struct insn_fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strbuf_init(&f->err, 0);
	f->metrics = json_object();
	f->info = json_object();
	f->unavailable = json_object();
	*state = f;
	return 0;
}

static int insn_teardown(void **state)
{
	struct insn_fx *f = *state;

	free(f->w);
	json_decref(f->metrics);
	json_decref(f->info);
	json_decref(f->unavailable);
	strbuf_release(&f->err);
	free(f);
	return 0;
}

/* insn_windows of text into f, after the windows read before are freed. */
static int fx_windows(struct insn_fx *f, const char *text, size_t skip)
{
	free(f->w);
	f->w = NULL;
	return insn_windows(text, skip, &f->w, &f->n, &f->err);
}

/* f's windows read from text, which must hold nwin. */
static void fx_read(struct insn_fx *f, const char *text, size_t nwin)
{
	if (fx_windows(f, text, 0) < 0)
		fail_msg("insn_windows: %s", f->err.buf);
	assert_int_equal(f->n, nwin);
}

/* insn_metrics of f's first window into f's objects. */
static int fx_metrics(struct insn_fx *f, double ops, const char *workload, uint64_t vcpus, int shared)
{
	return insn_metrics(&f->w[0], ops, workload, vcpus, shared, f->metrics, f->info, f->unavailable,
			    &f->err);
}

/* A row the metrics must hold: its name after "WORKLOAD.", its value. */
struct insn_row {
	const char *key;
	double value;
};

/* Fails, naming the row, unless each row of want (up to a NULL key) is in
 * f's metrics under prefix "." key, with its value. */
static void fx_check_rows(const struct insn_fx *f, const char *prefix, const struct insn_row *want)
{
	char key[128];

	for (; want->key; want++) {
		const json_t *v;

		snprintf(key, sizeof(key), "%s.%s", prefix, want->key);
		v = json_object_get(f->metrics, key);
		if (!v)
			fail_msg("no row %s (want %g)", key, want->value);
		if (!json_is_real(v) || fabs(json_real_value(v) - want->value) > 1e-9)
			fail_msg("%s: %g, want %g", key, json_number_value(v), want->value);
	}
}

/* fx_rows(f, PREFIX, { KEY, VALUE }...): the rows PREFIX.KEY of f's
 * metrics have these values (fx_check_rows). */
#define fx_rows(f, prefix, ...) \
	fx_check_rows((f), (prefix), (const struct insn_row[]){ __VA_ARGS__, { NULL, 0 } })

/* The markers of earlier specs are counted, so a spec's window 1 is the
 * first pair after them. */
static void test_windows_after_skip(void **state)
{
	struct insn_fx *f = *state;
	size_t nmark = 0;

	assert_int_equal(insn_count_markers(two_specs, &nmark, &f->err), 0);
	assert_int_equal(nmark, 6);
	assert_int_equal(fx_windows(f, two_specs, 2), 0);
	assert_int_equal(f->n, 2);
	assert_int_equal(f->w[0].end[INSN_KERNEL] - f->w[0].begin[INSN_KERNEL], 2000);
	assert_int_equal(f->w[1].end[INSN_USER] - f->w[1].begin[INSN_USER], 300);
	assert_int_equal(f->w[1].end[INSN_SPIN] - f->w[1].begin[INSN_SPIN], 30);
}

/* Per operation, three rows named after the workload, lower is better. */
static void test_metrics_per_op(void **state)
{
	struct insn_fx *f = *state;

	fx_read(f, two_specs, 3);
	assert_int_equal(fx_metrics(f, 4, "mprotect", INSN_ALL_VCPUS, 0), 0);
	fx_rows(f, "mprotect", { "kernel_insn_per_op", 500 }, { "user_insn_per_op", 50 }, { "spin_insn_per_op", 5 });
	assert_string_equal(jsonget_str(json_object_get(f->info, "mprotect.kernel_insn_per_op"), "direction"),
			    "lower");
	/* lines without the host clocks (an older plugin): those rows say why */
	assert_null(json_object_get(f->metrics, "mprotect.host_ns_per_op"));
	assert_non_null(json_object_get(f->unavailable, "mprotect.host_cpu_ns_per_op"));
	assert_non_null(strstr(jsonget_str(f->unavailable, "mprotect.host_ns_per_op"), "no host clock columns"));
	/* a window without operations has no per-op rows */
	assert_int_equal(fx_metrics(f, 0, "mprotect", INSN_ALL_VCPUS, 0), -1);
	assert_non_null(strstr(f->err.buf, "no operations"));
}

/* The host clock column: the emulator's wall-clock ns per operation, a
 * time row beside the counts; a clock that goes back is caught too. */
static void test_host_clock(void **state)
{
	struct insn_fx *f = *state;

	fx_read(f, host_clock, 1);
	assert_int_equal(fx_metrics(f, 4, "mprotect", INSN_ALL_VCPUS, 0), 0);
	fx_rows(f, "mprotect", { "host_ns_per_op", 1e6 }, { "host_cpu_ns_per_op", 5e5 }, { "kernel_insn_per_op", 500 });
	assert_string_equal(jsonget_str(json_object_get(f->info, "mprotect.host_ns_per_op"), "unit"), "ns/op");
	/* no TLB model here: its four rows say so */
	assert_int_equal(json_object_size(f->unavailable), 4);
	assert_non_null(strstr(jsonget_str(f->unavailable, "mprotect.tlb_lost_per_op"),
			       "TLB model was off in this boot"));
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 900 5\nE 2 0 2 2 2 800 6\n", 0), -1);
	assert_non_null(strstr(f->err.buf, "host_ns_per_op count went backwards"));
}

/* The TLB model's columns: four rows per op, class work; a model that
 * could not count says why; a count of the model that falls is caught. */
static void test_tlb_columns(void **state)
{
	struct insn_fx *f = *state;

	fx_read(f, tlb_on, 1);
	assert_int_equal(fx_metrics(f, 4, "mprotect", INSN_ALL_VCPUS, 0), 0);
	fx_rows(f, "mprotect", { "dtlb_miss_per_op", 50 }, { "itlb_miss_per_op", 2 }, { "tlb_lost_per_op", 100 },
		{ "tlb_inval_received_per_op", 25 });
	assert_string_equal(jsonget_str(json_object_get(f->info, "mprotect.tlb_lost_per_op"), "source"),
			    "qemu-plugin TLB model");
	assert_int_equal(json_object_size(f->unavailable), 0);
	fx_read(f, tlb_unavailable, 1);
	assert_int_equal(fx_metrics(f, 4, "stencil", INSN_ALL_VCPUS, 0), 0);
	assert_null(json_object_get(f->metrics, "stencil.dtlb_miss_per_op"));
	assert_string_equal(jsonget_str(f->unavailable, "stencil.dtlb_miss_per_op"),
			    "the instruction plugin's TLB model: QEMU gives no registers");
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 5 6 9 9 9 9\nE 2 0 2 2 2 7 8 9 9 3 9\n", 0), -1);
	assert_non_null(strstr(f->err.buf, "tlb_lost_per_op count went backwards"));
	/* a TLB column missing is a malformed line */
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 5 6 9 9 9\n", 0), -1);
}

/* Each vCPU's own TLB counts: a workload's rows count its vCPUs, a
 * neighbour's count apart per operation of its own; a CPU the plugin did
 * not count, or a file without the per-vCPU columns, says why. */
static void test_tlb_per_vcpu(void **state)
{
	struct insn_fx *f = *state;

	fx_read(f, vcpu_tlb, 1);
	assert_int_equal(f->w[0].nvcpu, 2);
	/* the stencil on vCPU 0: it received the 100 broadcasts and lost nothing */
	assert_int_equal(fx_metrics(f, 10, "stencil", 1, 0), 0);
	fx_rows(f, "stencil", { "tlb_inval_received_per_op", 10 }, { "tlb_lost_per_op", 0 }, { "dtlb_miss_per_op", 1 },
		/* the instruction rows are the whole guest's still */
		{ "kernel_insn_per_op", 200 });
	/* its mprotect neighbour on vCPU 1, 200 operations: 2 lost each */
	insn_tlb_metrics(&f->w[0], 200, "neighbour.mprotect", 2, f->metrics, f->info, f->unavailable);
	fx_rows(f, "neighbour.mprotect", { "tlb_lost_per_op", 2 }, { "tlb_inval_received_per_op", 0 });
	assert_int_equal(json_object_size(f->unavailable), 0);
	/* a CPU the plugin did not count */
	insn_tlb_metrics(&f->w[0], 200, "neighbour.mprotect", 4, f->metrics, f->info, f->unavailable);
	assert_string_equal(jsonget_str(f->unavailable, "neighbour.mprotect.tlb_lost_per_op"),
			    "the agent ran on CPU 2, but the instruction plugin counts 2 vCPUs");
	/* a file without the per-vCPU columns: a subset cannot be counted */
	json_object_clear(f->unavailable);
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 5 6 9 9 9 9\nE 2 0 2 2 2 7 8 9 9 9 9\n", 0), 0);
	assert_int_equal(fx_metrics(f, 1, "stencil", 1, 0), 0);
	assert_non_null(strstr(jsonget_str(f->unavailable, "stencil.tlb_lost_per_op"), "no per-vCPU TLB counts"));
	/* vCPUs out of order, or a count missing, are malformed lines */
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 5 6 9 9 9 9 v1=1,1,1,1\n", 0), -1);
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 5 6 9 9 9 9 v0=1,1,1\n", 0), -1);
}

/* Each vCPU's own instructions (",K,U,S" after its TLB counts): a
 * workload's instruction rows count its vCPUs alone, so a neighbour's
 * work on another vCPU is not the workload's; without them, a window with
 * a neighbour has no instruction rows, and says why. */
static void test_insn_per_vcpu(void **state)
{
	struct insn_fx *f = *state;

	fx_read(f, vcpu_insn, 1);
	assert_int_equal(f->w[0].have_vinsn, 1);
	/* the stencil on vCPU 0, 10 points: 100 kernel and 100 user
	 * instructions of its vCPU, not the 8000 its neighbour ran on vCPU 1 */
	assert_int_equal(fx_metrics(f, 10, "stencil", 1, 1), 0);
	fx_rows(f, "stencil", { "kernel_insn_per_op", 10 }, { "user_insn_per_op", 10 }, { "spin_insn_per_op", 0 });
	/* every vCPU: the machine's count */
	assert_int_equal(fx_metrics(f, 10, "mprotect", INSN_ALL_VCPUS, 0), 0);
	fx_rows(f, "mprotect", { "kernel_insn_per_op", 800 });
	assert_int_equal(json_object_size(f->unavailable), 0);
	/* a CPU the plugin did not count: the instruction rows say so too */
	assert_int_equal(fx_metrics(f, 10, "fft", 4, 1), 0);
	assert_string_equal(jsonget_str(f->unavailable, "fft.kernel_insn_per_op"),
			    "the agent ran on CPU 2, but the instruction plugin counts 2 vCPUs");
	/* per-vCPU TLB counts without instructions (an older plugin): with a
	 * neighbour the instruction rows are unavailable; alone, the machine's */
	json_object_clear(f->unavailable);
	json_object_clear(f->metrics);
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 5 6 9 9 9 9 v0=1,1,1,1\nE 2 0 2 2 2 7 8 9 9 9 9 v0=1,1,1,1\n", 0),
			 0);
	assert_int_equal(f->w[0].have_vinsn, 0);
	assert_int_equal(fx_metrics(f, 1, "stencil", 1, 1), 0);
	assert_null(json_object_get(f->metrics, "stencil.kernel_insn_per_op"));
	assert_non_null(strstr(jsonget_str(f->unavailable, "stencil.kernel_insn_per_op"),
			       "the count would add the neighbour's work"));
	assert_int_equal(fx_metrics(f, 1, "mprotect", 1, 0), 0);
	fx_rows(f, "mprotect", { "kernel_insn_per_op", 1 });
	/* some vCPUs with instructions and some without, or a count short:
	 * malformed */
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 5 6 9 9 9 9 v0=1,1,1,1,5,5,5 v1=1,1,1,1\n", 0), -1);
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 5 6 9 9 9 9 v0=1,1,1,1,5,5\n", 0), -1);
	assert_int_equal(fx_windows(f, "B 1 0 1 1 1 5 6 9 9 9 9 v0=1,1,1,1 v1=1,1,1,1,5,5,5\n", 0), -1);
}

/* A count that falls wrapped (or the plugin restarted): said, not used. */
static void test_wrap_caught(void **state)
{
	struct insn_fx *f = *state;

	assert_int_equal(fx_windows(f, "B 1 0 18446744073709551000 5 0\nE 2 0 200 6 0\n", 0), -1);
	assert_null(f->w);
	assert_non_null(strstr(f->err.buf, "went backwards"));
	assert_non_null(strstr(f->err.buf, "kernel_insn_per_op"));
}

/* Markers out of order, and lines that are not markers. */
static void test_bad_files(void **state)
{
	static const char *const bad[] = {
		"B 1 0 1 1 1\nB 2 0 2 2 2\n",		/* opened twice */
		"E 1 0 1 1 1\n",			/* closed, never opened */
		"B 1 0 1 1\n",				/* a count missing */
		"B 1 0 1 1 1 junk\n",
		"X 1 0 1 1 1\n",
		"B 1 0 99999999999999999999 1 1\n",	/* over 64 bits */
	};
	size_t i, n, nmark;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct strbuf err = STRBUF_INIT;
		struct insn_window *w = NULL;

		assert_int_equal(insn_windows(bad[i], 0, &w, &n, &err), -1);
		assert_true(err.len > 0);
		strbuf_release(&err);
	}
	{
		struct strbuf err = STRBUF_INIT;

		assert_int_equal(insn_count_markers("# header\nB 1 0 1 1 1\nbad line\n", &nmark, &err), -1);
		assert_non_null(strstr(err.buf, "line 3"));
		strbuf_release(&err);
	}
}

/* Every row gets the reason when there are no counts. */
static void test_unavailable(void **state)
{
	json_t *u = json_object();

	(void)state;
	insn_unavailable("tcp-rr", "the guest runs under KVM", u);
	assert_int_equal(json_object_size(u), 9);
	assert_string_equal(jsonget_str(u, "tcp-rr.tlb_inval_received_per_op"),
			    "the guest runs under KVM");
	assert_string_equal(jsonget_str(u, "tcp-rr.spin_insn_per_op"),
			    "the guest runs under KVM");
	json_decref(u);
}

/* The tests that work on a struct insn_fx of their own. */
#define insn_test(t) cmocka_unit_test_setup_teardown(t, insn_setup, insn_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		insn_test(test_windows_after_skip),
		insn_test(test_metrics_per_op),
		insn_test(test_host_clock),
		insn_test(test_tlb_columns),
		insn_test(test_tlb_per_vcpu),
		insn_test(test_insn_per_vcpu),
		insn_test(test_wrap_caught),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_unavailable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
