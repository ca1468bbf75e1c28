#ifndef TLBLAB_TEXTWRAP_H
#define TLBLAB_TEXTWRAP_H

#include <stddef.h>

#include "strbuf.h"

/*
 * Plain text of a fixed width, for what is read in a mail client or a
 * terminal (report.h). Widths are in columns: one per UTF-8 character
 * (strbuf_utf8_width). The text given is one line, already cleaned
 * (strbuf_add_line_clean).
 */

/*
 * Appends text as a paragraph: its first line starts with `first` (whose
 * width counts), the others with `indent` spaces; words wrap at `width`,
 * and a word longer than a line stands on a line of its own (textwrap_fit
 * cuts it). Ends with a newline.
 */
void textwrap_para(struct strbuf *out, const char *first, size_t indent, const char *text, size_t width);

/*
 * The last pass over text[from..]: a line wider than `width` (a long URL
 * or symbol a table could not wrap) is broken at its last space that
 * leaves a word or more on the left, else at the width, and continues
 * four columns further in than it began (at most 24).
 */
void textwrap_fit(struct strbuf *text, size_t from, size_t width);

#endif
