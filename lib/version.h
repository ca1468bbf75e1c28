#ifndef TLBLAB_VERSION_H
#define TLBLAB_VERSION_H

/*
 * The one version of tlblab: tlblabd's /api/v1/health and start-up line,
 * the client's `tlblab version` and User-Agent, the agent's hello line and
 * `tlblab-agent version` all say this. Bump it here only.
 */
#define TLBLAB_VERSION "0.1.0"

#endif
