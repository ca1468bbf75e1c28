#include "client.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "banned.h"

struct body_sink {
	struct strbuf *sb;
	int too_large;
};

static size_t body_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct body_sink *sink = arg;
	size_t n = size * nmemb;

	if (strbuf_add(sink->sb, data, n) < 0) {
		sink->too_large = 1;
		return 0;	/* makes curl stop with CURLE_WRITE_ERROR */
	}
	return n;
}

int client_init(struct client *c, const char *server, const char *token,
		struct strbuf *err)
{
	size_t len;
	const char *p;

	memset(c, 0, sizeof(*c));
	if (strncmp(server, "http://", 7) && strncmp(server, "https://", 8))
		return strbuf_seterr(err, "--server: '%s' is not an http:// or https:// URL",
				     server);
	for (p = server; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return strbuf_seterr(err, "--server: URL contains a space or control character");
	if (token && *token) {
		for (p = token; *p; p++)
			if ((unsigned char)*p < ' ' || *p == 0x7f)
				return strbuf_seterr(err, "TLBLAB_TOKEN contains a control character");
		c->token = strdup(token);
		if (!c->token)
			abort();
	}
	c->server = strdup(server);
	if (!c->server)
		abort();
	len = strlen(c->server);
	while (len > 0 && c->server[len - 1] == '/')
		c->server[--len] = '\0';
	c->curl = curl_easy_init();
	if (!c->curl)
		return strbuf_seterr(err, "cannot initialise libcurl");
	return 0;
}

void client_release(struct client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->server);
	free(c->token);
	memset(c, 0, sizeof(*c));
}

void client_add_query(struct client *c, struct strbuf *path, const char *name,
		      const char *value)
{
	char *esc = curl_easy_escape(c->curl, value, 0);

	if (!esc)
		abort();
	strbuf_addf(path, "%c%s=%s", strchr(path->buf, '?') ? '&' : '?', name, esc);
	curl_free(esc);
}

/* "HTTP 404 not_found: no job 99" from the documented error body, or the
 * start of whatever else the server sent. */
static void http_error(struct strbuf *err, long status, const struct strbuf *body)
{
	json_t *root = json_loadb(body->buf, body->len, 0, NULL);
	json_t *e = root ? json_object_get(root, "error") : NULL;
	const char *code = jsonget_str(e, "code"), *msg = jsonget_str(e, "message");
	char clean[512];

	if (code || msg) {
		strbuf_seterr(err, "HTTP %ld %s: ", status,
			      client_fmt_clean(clean, sizeof(clean), code ? code : "error"));
		strbuf_addstr(err, client_fmt_clean(clean, sizeof(clean), msg ? msg : "(no message)"));
	} else {
		size_t n = body->len < 200 ? body->len : 200;
		char *first = strndup(body->buf, n);

		if (!first)
			abort();
		first[strcspn(first, "\r\n")] = '\0';
		strbuf_seterr(err, "HTTP %ld%s%s", status, *first ? ": " : "",
			      client_fmt_clean(clean, sizeof(clean), first));
		free(first);
	}
	json_decref(root);
}

int client_request(struct client *c, const char *method, const char *path,
		   json_t *body, struct strbuf *ret_raw, json_t **ret_json,
		   struct strbuf *err)
{
	CURL *curl = c->curl;
	struct curl_slist *headers = NULL;
	struct strbuf url = STRBUF_INIT, resp = STRBUF_INIT, auth = STRBUF_INIT;
	struct body_sink sink = { &resp, 0 };
	char errbuf[CURL_ERROR_SIZE] = "";
	char *payload = NULL;
	json_error_t jerr;
	json_t *root = NULL;
	CURLcode cc;
	long status = 0;
	int ret = -1;

	c->last_error = CLIENT_ERR_NONE;
	c->last_status = 0;
	resp.max = CLIENT_MAX_BODY;
	strbuf_addf(&url, "%s%s", c->server, path);

	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, url.buf);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, CLIENT_CONNECT_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, CLIENT_TOTAL_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)CLIENT_MAX_BODY);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "tlblab/" TLBLAB_VERSION);
	/* redirects are not followed, so the token goes nowhere but server */
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);

	headers = curl_slist_append(headers, "Accept: application/json");
	if (c->token) {
		strbuf_addf(&auth, "Authorization: Bearer %s", c->token);
		headers = curl_slist_append(headers, auth.buf);
	}
	if (body) {
		payload = json_dumps(body, JSON_COMPACT);
		if (!payload) {
			strbuf_seterr(err, "cannot encode the request body");
			goto out;
		}
		headers = curl_slist_append(headers, "Content-Type: application/json");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)strlen(payload));
	} else if (!strcmp(method, "POST")) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
	}
	if (!headers)
		abort();
	if (strcmp(method, "GET") && strcmp(method, "POST"))
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

	cc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	c->last_status = status;
	if (cc != CURLE_OK) {
		if (sink.too_large || cc == CURLE_FILESIZE_EXCEEDED) {
			c->last_error = CLIENT_ERR_RESPONSE;
			strbuf_seterr(err, "%s %s: response larger than %u MiB", method,
				      url.buf, CLIENT_MAX_BODY >> 20);
		} else {
			c->last_error = CLIENT_ERR_NET;
			strbuf_seterr(err, "cannot reach tlblabd at %s: %s", url.buf,
				      *errbuf ? errbuf : curl_easy_strerror(cc));
		}
		goto out;
	}
	if (status < 200 || status > 299) {
		c->last_error = CLIENT_ERR_HTTP;
		http_error(err, status, &resp);
		goto out;
	}
	if (ret_json) {
		root = json_loadb(resp.buf, resp.len, JSON_REJECT_DUPLICATES, &jerr);
		if (!root || !json_is_object(root)) {
			char clean[256];

			c->last_error = CLIENT_ERR_RESPONSE;
			strbuf_seterr(err, "%s %s: the answer is not a JSON object%s%s", method,
				      url.buf, root ? "" : ": ",
				      root ? "" : client_fmt_clean(clean, sizeof(clean), jerr.text));
			goto out;
		}
		*ret_json = root;
		root = NULL;
	}
	if (ret_raw && strbuf_add(ret_raw, resp.buf, resp.len) < 0) {
		c->last_error = CLIENT_ERR_RESPONSE;
		strbuf_seterr(err, "%s %s: response too large", method, url.buf);
		if (ret_json) {
			json_decref(*ret_json);
			*ret_json = NULL;
		}
		goto out;
	}
	ret = 0;
out:
	/* the handle keeps pointers to these until the next reset */
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, NULL);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, NULL);
	curl_slist_free_all(headers);
	free(payload);
	json_decref(root);
	strbuf_release(&auth);
	strbuf_release(&resp);
	strbuf_release(&url);
	return ret;
}

int client_valid_name(const char *s)
{
	return name_valid(s);
}
