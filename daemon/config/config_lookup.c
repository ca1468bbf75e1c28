/*
 * What a loaded configuration names (config.h): its machines, builders,
 * trees, suites and tracks by name, whether two endpoints share a host,
 * a machine's tags and allow lists, the names of the transports and boot
 * methods, and the hosts a patch URL may name. Below the section parsers,
 * which look up what they refer to here.
 */
#include "config.h"

#include "backend.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "banned.h"

const struct cfg_machine *config_machine(const struct lab_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->nmachines; i++)
		if (cfg->machines[i].name && !strcmp(cfg->machines[i].name, name))
			return &cfg->machines[i];
	return NULL;
}

const struct cfg_builder *config_builder(const struct lab_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->nbuilders; i++)
		if (cfg->builders[i].name && !strcmp(cfg->builders[i].name, name))
			return &cfg->builders[i];
	return NULL;
}

const struct cfg_tree *config_tree(const struct lab_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->ntrees; i++)
		if (cfg->trees[i].name && !strcmp(cfg->trees[i].name, name))
			return &cfg->trees[i];
	return NULL;
}

/* The host an endpoint runs on, for config_same_host: its host_group, else
 * "local" or the SSH host. */
static void host_of(const struct cfg_endpoint *ep, char *buf, size_t len)
{
	if (ep->host_group)
		snprintf(buf, len, "group:%s", ep->host_group);
	else if (config_endpoint_local(ep))
		snprintf(buf, len, "local");
	else
		snprintf(buf, len, "ssh:%s", ep->host ? ep->host : "");
}

int config_same_host(const struct cfg_endpoint *a, const struct cfg_endpoint *b)
{
	char ha[300], hb[300];

	host_of(a, ha, sizeof(ha));
	host_of(b, hb, sizeof(hb));
	return !strcmp(ha, hb);
}

const struct cfg_suite *config_suite(const struct lab_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->nsuites; i++)
		if (cfg->suites[i].name && !strcmp(cfg->suites[i].name, name))
			return &cfg->suites[i];
	return NULL;
}

const struct cfg_track *config_track(const struct lab_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->ntracks; i++)
		if (cfg->tracks[i].name && !strcmp(cfg->tracks[i].name, name))
			return &cfg->tracks[i];
	return NULL;
}

int config_machine_has_tag(const struct cfg_machine *m, const char *tag)
{
	if (!m || !m->tags || !tag)
		return 0;
	for (char **t = m->tags; *t; t++)
		if (!strcmp(*t, tag))
			return 1;
	return 0;
}

int config_machine_allowed(const struct cfg_machine *m, const json_t *machines, const json_t *tags)
{
	size_t i;
	json_t *v;
	int named = json_array_size(machines) == 0;

	json_array_foreach(machines, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), m->name))
			named = 1;
	if (!named)
		return 0;
	json_array_foreach(tags, i, v)
		if (!json_is_string(v) || !config_machine_has_tag(m, json_string_value(v)))
			return 0;
	return 1;
}

const char *config_transport_name(const struct cfg_endpoint *ep)
{
	return ep->transport ? ep->transport->name : "unknown";
}

int config_endpoint_local(const struct cfg_endpoint *ep)
{
	return ep->transport && (ep->transport->flags & BACKEND_THIS_HOST);
}

int config_endpoint_pausable(const struct cfg_endpoint *ep)
{
	return ep->transport && (ep->transport->flags & BACKEND_PAUSABLE);
}

const char *config_boot_method_name(const struct cfg_machine *m)
{
	return m->boot ? m->boot->name : "none";
}

int config_host_allowed(const struct lab_config *cfg, const char *host)
{
	char name[HOST_MAX_LEN + 1];
	const char *end, *rest;
	size_t len;

	if (!host)
		return 1;
	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end)
			return 0;
		host++;
		rest = end + 1;
	} else {
		end = strchr(host, ':');
		if (!end)
			end = host + strlen(host);
		rest = end;
	}
	if (*rest && (*rest != ':' || !rest[1] || strspn(rest + 1, "0123456789") != strlen(rest + 1)))
		return 0;
	len = (size_t)(end - host);
	/* "lab.example.org." is the same name as "lab.example.org" */
	if (len > 1 && host[len - 1] == '.')
		len--;
	if (!len || len > HOST_MAX_LEN)
		return 0;
	memcpy(name, host, len);
	name[len] = '\0';
	if (!strcasecmp(name, "localhost") || !strcmp(name, "127.0.0.1") || !strcasecmp(name, "::1") ||
	    !strcasecmp(name, cfg->listen_host))
		return 1;
	for (char **h = cfg->allowed_hosts; h && *h; h++)
		if (!strcasecmp(name, *h))
			return 1;
	return 0;
}
