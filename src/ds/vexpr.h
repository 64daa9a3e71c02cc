/* vexpr.h - the FILTER expression language of vector sets (Redis 8 VSIM
 * ... FILTER '.year > 1990 and .genre == "action"').
 *
 * An expression is compiled once per VSIM and then evaluated against the
 * JSON attributes of every node the search visits.  The language follows
 * Redis 8 (modules/vector-sets, expr.c + fastjson.c) so the same filters
 * accept and match the same elements:
 *
 *  - Values: numbers (doubles: 12, -3, 1.5, 2e3; a leading '-' belongs to
 *    the number at the start, after '(' or after an operator, e.g.
 *    "5 - -3"), strings in '...' or "..." (backslash escapes: \n \r \t,
 *    any other \X is X), tuples [1, "a", ...] of number/string literals
 *    (a trailing comma is allowed), the literal null, and selectors .name
 *    (a top-level key of the JSON object; name is [A-Za-z0-9_-]+, so
 *    ".a-b" is the key "a-b").  There are no true/false literals: JSON
 *    booleans are the numbers 1 and 0.
 *  - Operators, loosest first: or || ; and && ; > >= < <= == != in ;
 *    + - ; * / % ; ** (right associative) ; ! not (prefix, binds tighter
 *    than every binary operator: "!.a == 1" is "(!.a) == 1").  Parentheses
 *    group.  Word operators are matched as the longest operator prefix of
 *    a run of letters/operator characters ("andy" is "and" then an error).
 *  - Arithmetic and ordering (< > ...) convert both sides to numbers: a
 *    string converts if it is wholly a number (strtod), else to 0; null and
 *    tuples convert to 0.  == and != compare strings bytewise, numbers
 *    numerically, null equals only null, anything else numerically.
 *    "a in b": membership (==) when b is a tuple or a JSON array; substring
 *    when both are strings; otherwise false.
 *  - Truth: a number is true unless 0; a string unless empty; null is
 *    false; tuples are true.  Results of operators are the numbers 1/0.
 *  - Attributes: a selector reads the first top-level key with that name.
 *    JSON numbers, strings (escapes \" \\ \n \r \t decoded, any other \X
 *    kept as X), true/false (1/0), null, and arrays of those (nested arrays
 *    allowed) become values; an object value, a missing key, a value that
 *    does not parse, or attributes that are not a JSON object before the
 *    key is reached make the whole expression false ("does not match"),
 *    never an error.  Like Redis, the JSON is read only as far as needed.
 *
 * Threads: a compiled struct vexpr is immutable; any number of threads may
 * call vexpr_eval on it at once.  Evaluation keeps its state on the stack
 * and allocates nothing in the common case (only an expression with a very
 * deep value stack, very many distinct selectors, or long escaped strings
 * falls back to the heap), and never recurses, whatever the input. */
#ifndef HK_VEXPR_H
#define HK_VEXPR_H

#include <stddef.h>

/* The error reply for a FILTER that does not compile, as vset.c sends it:
 * the prefix followed by the expression from the position where parsing
 * failed (the whole expression when the failure is structural, e.g.
 * unbalanced parentheses or a missing operand).  vexpr_compile writes the
 * complete reply text (prefix included) into err. */
#define VEXPR_ERR_SYNTAX "ERR syntax error in FILTER expression near: "

struct vexpr;

/* Compile s (len bytes; like Redis, the expression ends at the first NUL
 * byte).  Returns NULL on a syntax error, with the full error reply text
 * (VEXPR_ERR_SYNTAX + the rest of the expression, truncated to fit) in
 * err when err/errlen are given. */
struct vexpr *vexpr_compile(const char *s, size_t len, char *err, size_t errlen);

/* As vexpr_compile, but reports the failure position instead: on NULL,
 * *errpos (if not NULL) is the byte offset of s the error message quotes
 * from (0 = the whole expression). */
struct vexpr *vexpr_compile_at(const char *s, size_t len, size_t *errpos);

/* 1 if the element whose attributes are json (jlen bytes) matches, else 0.
 * json == NULL means the element has no attributes: never a match (as in
 * Redis, even for an expression without selectors). */
int vexpr_eval(const struct vexpr *e, const char *json, size_t jlen);

void vexpr_free(struct vexpr *e);

/* Number of distinct selectors (fields) the expression reads. */
size_t vexpr_nfields(const struct vexpr *e);

#endif
