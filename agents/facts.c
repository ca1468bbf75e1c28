#include "facts.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "strbuf.h"
#include "util.h"
#include "banned.h"

/* A small file's content, trimmed, or json null. */
static json_t *file_string(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *v;

	if (strbuf_read_file(&sb, path, 64 << 10) < 0) {
		strbuf_release(&sb);
		return json_null();
	}
	strbuf_trim(&sb);
	v = json_stringn(sb.buf, sb.len);
	strbuf_release(&sb);
	return v ? v : json_null();
}

static json_t *cpu_model(void)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *v = json_null();
	char *p;

	if (strbuf_read_file(&sb, "/proc/cpuinfo", 4 << 20) == 0 &&
	    (p = strstr(sb.buf, "model name")) != NULL && (p = strchr(p, ':')) != NULL) {
		char *e = strchr(p, '\n');

		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		json_decref(v);
		v = json_stringn(p, e ? (size_t)(e - p) : strlen(p));
	}
	strbuf_release(&sb);
	return v ? v : json_null();
}

static json_t *flush_ceiling(void)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t v;
	json_t *r = json_null();

	if (strbuf_read_file(&sb, "/sys/kernel/debug/x86/tlb_single_page_flush_ceiling", 64) == 0) {
		strbuf_trim(&sb);
		if (parse_u64(sb.buf, &v) == 0) {
			json_decref(r);
			r = json_integer((json_int_t)v);
		}
	}
	strbuf_release(&sb);
	return r;
}

static json_t *vulnerabilities(void)
{
	const char *dir = "/sys/devices/system/cpu/vulnerabilities";
	json_t *obj = json_object();
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d) {
		json_decref(obj);
		return json_null();
	}
	while ((de = readdir(d)) != NULL && n < 64) {
		char path[512];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		json_object_set_new(obj, de->d_name, file_string(path));
		n++;
	}
	closedir(d);
	return obj;
}

json_t *facts_collect(void)
{
	struct utsname u;
	json_t *h = json_object();
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	char host[256];

	if (uname(&u) == 0) {
		json_object_set_new(h, "kernel_release", json_string(u.release));
		json_object_set_new(h, "machine", json_string(u.machine));
	} else {
		json_object_set_new(h, "kernel_release", json_null());
		json_object_set_new(h, "machine", json_null());
	}
	json_object_set_new(h, "proc_version", file_string("/proc/version"));
	json_object_set_new(h, "cmdline", file_string("/proc/cmdline"));
	json_object_set_new(h, "boot_id", file_string("/proc/sys/kernel/random/boot_id"));
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		json_object_set_new(h, "hostname", json_string(host));
	}
	json_object_set_new(h, "cpus", json_integer(online > 0 ? online : 1));
	json_object_set_new(h, "cpu_model", cpu_model());
	json_object_set_new(h, "page_size", json_integer(sysconf(_SC_PAGESIZE)));
	json_object_set_new(h, "tlb_single_page_flush_ceiling", flush_ceiling());
	json_object_set_new(h, "vulnerabilities", vulnerabilities());
	return h;
}

json_t *facts_hello(void)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string("hello"));
	json_object_set_new(o, "protocol", json_integer(AGENT_PROTOCOL));
	json_object_set_new(o, "agent_version", json_string(TLBLAB_VERSION));
	json_object_set_new(o, "host", facts_collect());
	return o;
}
