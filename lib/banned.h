#ifndef TLBLAB_BANNED_H
#define TLBLAB_BANNED_H

/*
 * Functions that are too easy to misuse: unbounded copies, static state,
 * silent parse failures. Included last by every source file (through the
 * compiler's -include), so a use of one is a compile error that names the
 * function. Use strbuf, snprintf into a sized buffer, strtok_r-free splitting,
 * and the checked parsers in util.h instead.
 */
#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef atol
#define atol(x) BANNED(atol)
#undef atof
#define atof(x) BANNED(atof)
#undef gets
#define gets(x) BANNED(gets)

#endif
