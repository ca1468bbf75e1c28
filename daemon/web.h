#ifndef TLBLAB_WEB_H
#define TLBLAB_WEB_H

#include <stddef.h>

/*
 * The dashboard's static files, served by tlblabd from a web/ directory next
 * to the API. A URL path maps to a file under that directory only when every
 * segment is made of [A-Za-z0-9._-] and none starts with a dot; a path whose
 * last segment has no extension is a page of the single-page app
 * (/jobs/12, /machines) and gets index.html, so dashboard links stay stable
 * URLs.
 */

/* Resolves url (an absolute URL path, without the query) under dir into
 * buf. Returns 0 and the file's path, or -1 when the path is not one this
 * server will serve (the caller answers 404). */
int web_resolve(const char *dir, const char *url, char *buf, size_t len);

/* The Content-Type for path, by extension ("application/octet-stream" when
 * unknown). */
const char *web_content_type(const char *path);

#endif
