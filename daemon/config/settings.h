#ifndef TLBLAB_SETTINGS_H
#define TLBLAB_SETTINGS_H

#include <stddef.h>
#include <stdio.h>

#include "strbuf.h"

/*
 * One setting, one row (Redis' config.c): a setting's name, type, where it
 * lands (an offset into the struct its section fills), default, bounds and
 * what it is, declared once. The lab: section and every backend's section
 * (a boot method's qemu:, kexec:, reboot:) are tables of rows; from a table
 * come the defaults, the parser of the section (unknown, duplicate and
 * missing keys included), the values in force (`tlblabd -n`), the
 * reference (`tlblabd -S`, docs/lab-settings.md) and the release of what
 * the values own.
 *
 * A value with a shape of its own (the listen address, the tokens, a TLB
 * geometry) is a SET_CUSTOM row whose setting_custom does the parts that
 * differ; the rest share the handlers of their type.
 */

struct cfg_ctx;
struct cfg_section;
struct setting;

enum setting_type {
	SET_STR,	/* char *: valid(s) must hold (must says what it is) */
	SET_LIST,	/* char **, NULL-terminated: each item valid */
	SET_ARGV,	/* char **: a command, a non-empty program name first */
	SET_CHOICE,	/* char *: one of names[] */
	SET_ENUM,	/* int: the index of one of names[] */
	SET_BOOL,	/* int */
	SET_INT,	/* int, from min to max */
	SET_BYTES,	/* size_t, from min to max */
	SET_SECONDS,	/* double, from min to max */
	SET_CUSTOM,	/* custom-> does it */
	SET_MAX
};

/* A row that must be present; missing, the message adds its `need`. */
#define SETTING_REQUIRED 1u

/* The parts of a type of its own (each may be NULL: nothing to do). */
struct setting_custom {
	const char *type_name;		/* the reference's type column */
	void (*defaults)(const struct setting *row, void *base);
	/* reads the row's value (the settings_* accessors below) into base */
	void (*parse)(struct cfg_section *sec, const struct setting *row, void *base);
	void (*text)(const struct setting *row, const void *base, struct strbuf *out);
	void (*release)(const struct setting *row, void *base);
};

struct setting {
	const char *name;
	enum setting_type type;
	size_t off;			/* of the field in the section's struct */
	double def;			/* the default of a number or a bool; NAN: none */
	const char *def_text;		/* of a string, a choice or a command (words
					 * split at spaces); NULL: none */
	double min, max;		/* of a number; NAN: none */
	const char *what;		/* what it is, for the reference */
	int (*valid)(const char *);	/* SET_STR, SET_LIST: what a value may be */
	const char *must;		/* ... as a message says it */
	const char *const *names;	/* SET_CHOICE, SET_ENUM: NULL-terminated */
	const struct setting_custom *custom;
	unsigned flags;			/* SETTING_REQUIRED */
	const char *need;		/* why a required row is, " (the guest's initramfs)" */
	const char *def_note;		/* the reference's default, where it is not
					 * one value ("the arch's QEMU") */
	const char *type_name;		/* the reference's type, where the type's
					 * own word says too little ("path") */
};

/* Sets base's fields to the rows' defaults. */
void settings_defaults(const struct setting *rows, size_t n, void *base);
/* Frees what base's fields own (strings, lists), by the rows. */
void settings_release(const struct setting *rows, size_t n, void *base);
/* A row's value in base as the configuration would write it. */
void settings_text(const struct setting *row, const void *base, struct strbuf *out);
/*
 * The reference of rows, as Markdown table rows (`prefix` before each
 * name: "lab.", "machines[].qemu."), after a header when header is set.
 */
void settings_reference(FILE *out, const char *prefix, const struct setting *rows, size_t n,
			int header);
/* The row named name, or NULL. */
const struct setting *settings_find(const struct setting *rows, size_t n, const char *name);

/*
 * A section being parsed: what a backend's finish() and a custom row see.
 * Errors are recorded at the position of the key's value (key NULL, or
 * absent: the section, or the item that holds it) and the load goes on.
 */
__attribute__((format(printf, 3, 4)))
void settings_error(struct cfg_section *sec, const char *key, const char *fmt, ...);
/* The same, at the key itself ("only with ..."). */
__attribute__((format(printf, 3, 4)))
void settings_key_error(struct cfg_section *sec, const char *key, const char *fmt, ...);
/* "missing key 'key' in WHAT" and why (" (required with transport ssh)"). */
void settings_missing(struct cfg_section *sec, const char *key, const char *why);
/* Whether the section has key (with any value, null too). */
int settings_has(const struct cfg_section *sec, const char *key);
/* The text of key's scalar value, or NULL. */
const char *settings_scalar(const struct cfg_section *sec, const char *key);
/* "the qemu section of machine 'm1'": how messages name the section. */
const char *settings_what(const struct cfg_section *sec);
/* Where key's value is (1-based; the section's start when absent). */
void settings_where(const struct cfg_section *sec, const char *key, int *ret_line, int *ret_col);
/* The lab being loaded (its settings are parsed before any backend's). */
const struct lab_config *settings_lab(const struct cfg_section *sec);
/* The load's context, for lab-wide checks after every machine. */
struct cfg_ctx *settings_ctx(struct cfg_section *sec);

/* The kinds of value the loader offers to backends' tables. */
/* A TLB model (docs/tlb-model.md): on, off, or {dtlb, itlb, stlb:
 * ENTRIESxWAYS}, into a char * of the plugin's arguments (NULL: off). */
extern const struct setting_custom config_tlb_geometry;

/* An error at line:col (1-based) of the file being loaded. */
__attribute__((format(printf, 4, 5)))
void settings_error_at(struct cfg_ctx *c, int line, int col, const char *fmt, ...);

#endif
