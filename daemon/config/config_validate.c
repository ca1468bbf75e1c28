/*
 * What a value of the configuration may be: names, user and host names,
 * IP addresses, paths and URLs, argv elements, host keys, programs, kernel
 * command lines, tokens. These values reach ssh, git, make, GRUB and log
 * lines, so each check is strict; config_int.h has the message (MUST_*)
 * that says what each one accepts.
 */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>

#include "config_int.h"
#include "util.h"
#include "banned.h"

/* ---- validators: 1 when s is acceptable ---- */

int config_valid_name(const char *s)
{
	return name_valid(s);
}

int config_valid_user(const char *s)
{
	return word_valid(s, USER_MAX_LEN, "-");
}

/* An IP literal, IPv6 without brackets. */
int config_valid_ip(const char *s)
{
	unsigned char addr[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, s, addr) == 1 || inet_pton(AF_INET6, s, addr) == 1;
}

/* An IP literal or a DNS name: it reaches ssh arguments and log lines, so
 * nothing but [A-Za-z0-9.-] in labels. */
int config_valid_host(const char *s)
{
	size_t n, label = 0;

	if (config_valid_ip(s))
		return 1;
	n = strlen(s);
	if (!n || n > HOST_MAX_LEN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '.') {
			if (!label)
				return 0;	/* empty label, or a leading dot */
			label = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-'))
			return 0;
		if (ch == '-' && !label)
			return 0;	/* a label (and the name) cannot start with '-' */
		if (++label > 63)
			return 0;
	}
	return 1;
}

/* Paths and URLs end up as arguments of ssh, git, make: no control
 * characters, and no leading '-' that a command would read as an option. */
int config_valid_path(const char *s)
{
	size_t n;

	if (!*s || *s == '-')
		return 0;
	for (n = 0; s[n]; n++) {
		unsigned char ch = (unsigned char)s[n];

		if (n >= PATH_MAX_LEN || ch < 0x20 || ch == 0x7f)
			return 0;
	}
	return 1;
}

/* An argv element run without a shell: anything but NUL, bounded. */
int config_valid_arg(const char *s)
{
	return strlen(s) <= ARG_MAX_LEN;
}

int config_valid_host_key(const char *s)
{
	static const char prefix[] = "SHA256:";
	size_t n;

	if (strncmp(s, prefix, sizeof(prefix) - 1))
		return 0;
	s += sizeof(prefix) - 1;
	for (n = 0; s[n]; n++) {
		char ch = s[n];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '+' || ch == '/'))
			break;
	}
	/* ssh-keygen prints it unpadded; accept a pasted '=' too */
	return n == HOST_KEY_B64_LEN && (!s[n] || (s[n] == '=' && !s[n + 1]));
}

int config_is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/*
 * A program run on a lab host (qemu's binary). Transports may hand it to a
 * remote shell, so it is a bare name looked up in PATH or an absolute path,
 * of characters no shell treats specially.
 */
int config_valid_program(const char *s)
{
	size_t n;

	if (!*s || *s == '-' || *s == '.')
		return 0;
	for (n = 0; s[n]; n++) {
		char ch = s[n];

		if (n >= PATH_MAX_LEN)
			return 0;
		if (!config_is_alnum(ch) && ch != '.' && ch != '_' && ch != '+' && ch != '-' && ch != '/')
			return 0;
		if (ch == '/' && *s != '/')
			return 0;	/* relative to what? neither a name nor absolute */
	}
	return s[n - 1] != '/';
}

/*
 * A kernel command line (qemu -append, kexec --append). It reaches the
 * remote kexec through a shell command, so only words of a safe set of
 * characters, separated by spaces; at least one word (to keep the running
 * kernel's command line, leave the key out).
 */
int config_valid_cmdline(const char *s)
{
	int words = 0;

	for (size_t n = 0; s[n]; n++) {
		char ch = s[n];

		if (n >= CMDLINE_MAX_LEN)
			return 0;
		if (ch == ' ')
			continue;
		if (!config_is_alnum(ch) && !strchr("._,=:/+-", ch))
			return 0;
		if (n == 0 || s[n - 1] == ' ')
			words++;
	}
	return words > 0;
}

/* Bearer tokens: printable ASCII without spaces, so they survive headers. */
int config_valid_token_n(const char *s, size_t len)
{
	if (len < TOKEN_MIN_LEN || len > TOKEN_MAX_LEN)
		return 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

int config_valid_token(const char *s)
{
	return config_valid_token_n(s, strlen(s));
}
