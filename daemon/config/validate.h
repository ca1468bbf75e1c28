#ifndef TLBLAB_VALIDATE_H
#define TLBLAB_VALIDATE_H

#include <stddef.h>

/*
 * What a value of the configuration may be (config_validate.c): the
 * checks every section and every backend's settings use, and the words
 * their messages say them in. Each returns 1 when s is acceptable.
 */

/* What each validator accepts, as error messages say it; and how to
 * replace the example token. */
#define MUST_NAME	"a name of 1 to 64 letters, digits, '.', '_' or '-', " \
			"not starting with '-' or '.'"
#define MUST_PATH	"a non-empty path without control characters, not starting with '-'"
#define MUST_HOST	"an IP address or a host name of letters, digits, '.' and '-'"
#define MUST_FETCH_ALLOW "an IP address, a CIDR (10.0.0.0/8, fd00::/8) or a host name of letters, " \
			"digits, '.' and '-'"
#define MUST_USER	"a user name of letters, digits, '.', '_' and '-', not starting with '-'"
#define MUST_HOST_KEY	"SHA256: followed by 43 base64 characters (as ssh-keygen -lf prints)"
#define MUST_TOKEN	"a token of 16 to 4096 printable characters without spaces"
#define MUST_URL	"a path or git URL without control characters, not starting with '-'"
#define MUST_CONFIG_BASE "tinyconfig, defconfig or a config file path without control " \
			"characters, not starting with '-'"
#define MUST_FRACTION	"a percentage like 2% or a fraction from 0 to 1"
#define MUST_ALPHA	"a significance level above 0 and below 1, like 0.01"
#define MUST_ARG	"a string of at most 4096 bytes"
#define MUST_PROGRAM	"a program name or an absolute path of letters, digits, '.', '_', " \
			"'+', '-' and '/', not starting with '-' or '.'"
#define MUST_IP		"an IPv4 or IPv6 address (without brackets)"
#define MUST_CMDLINE	"a kernel command line of at most 1024 characters: words of " \
			"letters, digits and '._,=:/+-' separated by spaces"
#define EXAMPLE_TOKEN_FIX "it is the example token of configs/lab.example.yaml, known to " \
			"everyone; make a token of your own (e.g. head -c 24 /dev/urandom | od -An -tx1 " \
			"| tr -d ' \\n')"

/* ---- config_validate.c: 1 when s is acceptable (MUST_* above say what is) ---- */

/* A user name on a lab host. */
int config_valid_user(const char *s);
/* An IP literal, IPv6 without brackets. */
int config_valid_ip(const char *s);
/* An IP literal or a DNS name of [A-Za-z0-9.-] labels. */
int config_valid_host(const char *s);
/* A path or URL that reaches a command's arguments. */
int config_valid_path(const char *s);
/* An argv element run without a shell. */
int config_valid_arg(const char *s);
/* A pinned host key: SHA256: and 43 base64 characters. */
int config_valid_host_key(const char *s);
/* [A-Za-z0-9]. */
int config_is_alnum(char ch);
/* A program name looked up in PATH, or an absolute path. */
int config_valid_program(const char *s);
/* A kernel command line of words of a shell-safe set. */
int config_valid_cmdline(const char *s);
/* A bearer token of len bytes. */
int config_valid_token_n(const char *s, size_t len);
/* A bearer token. */
int config_valid_token(const char *s);

#endif
