/*
 * eembc: the EEMBC benchmark runner's text protocol (MLPerf Tiny performance mode) over the
 * board's serial port, driving the compiled model. docs/eembc.md describes the commands;
 * tinydeploy/link/eembc.py is the host side used by the tests.
 *
 * Wire format: a command is text ending with '%'; tokens are separated by blanks (space, tab,
 * CR, LF). Every reply is zero or more lines ending with CR LF, then the line `m-ready`.
 * Replies start with `m-` (data) or `e-[...]` (an error: the command had no effect).
 *
 * Invariants: no allocation; one fixed line buffer (TD_EEMBC_LINE_MAX characters) and one
 * fixed input buffer (TD_EEMBC_DB_BYTES). Any byte sequence is accepted: an over-long line,
 * an unknown command, bad hex or `db` data without `db load` gets an `e-` line and `m-ready`,
 * and the state it leaves is the state before that command. `db` data lines are decoded as
 * they arrive, so one of them may carry any number of hex pairs. The input buffer survives
 * inferences: every inference starts from a fresh copy of it in the model's input tensor
 * (the planner may reuse the input's arena bytes once the first op has read them).
 */
#ifndef TD_EEMBC_H
#define TD_EEMBC_H

#include <stdint.h>

/* Longest command the line buffer holds, '%' excluded (the runner's longest is `db` with 31
 * bytes of hex: 65 characters). Longer lines are rejected, except `db` data lines. */
#ifndef TD_EEMBC_LINE_MAX
#define TD_EEMBC_LINE_MAX 128u
#endif

/* Capacity of the `db` input buffer: at least the model's input bytes (all inputs, in
 * order). The default follows the board's RAM: 1 KiB (KWS 490 B, AD 640 B) up to 32 KiB of
 * RAM, 4 KiB (IC 3,072 B) up to 256 KiB, else 32 KiB (VWW 27,648 B). A model whose input is
 * larger is reported at start-up; define TD_EEMBC_DB_BYTES to change it. */
#ifndef TD_EEMBC_DB_BYTES
#if defined(TD_RAM_SIZE) && TD_RAM_SIZE <= 32768u
#define TD_EEMBC_DB_BYTES 1024u
#elif defined(TD_RAM_SIZE) && TD_RAM_SIZE <= 262144u
#define TD_EEMBC_DB_BYTES 4096u
#else
#define TD_EEMBC_DB_BYTES 32768u
#endif
#endif

/* Decimals of each value in `m-results-[...]` (the reference prints 3; 6 keeps every int8
 * level of a softmax output, scale 1/256, apart). Rounded half away from zero, exactly. */
#ifndef TD_EEMBC_DECIMALS
#define TD_EEMBC_DECIMALS 6u
#endif

/* `name` answers m-name-dut-[TD_EEMBC_VENDOR]. */
#ifndef TD_EEMBC_VENDOR
#define TD_EEMBC_VENDOR "tinydeploy"
#endif

/* `profile` answers m-model-[TD_EEMBC_MODEL] when defined (kws01, vww01, ic01, ad01);
 * otherwise the benchmark is recognised from the input shape (see td_eembc_model_name). */
/* #define TD_EEMBC_MODEL "kws01" */

#define TD_EEMBC_FW_VERSION "ULPMark for tinyML Firmware V0.0.1"

/* Decoder of one `db` data line (hex pairs, blanks between pairs allowed), written to the
 * buffer past the committed position and committed only when the whole line is valid. */
typedef struct {
    uint32_t count;   /* bytes decoded in this line */
    uint8_t nibble;   /* pending high nibble + 1, 0 if none */
    uint8_t bad;      /* first invalid character, 0 if none */
    uint8_t bad_seen; /* 1 once an invalid character or a split pair was seen */
    uint8_t split;    /* 1 if a blank fell between the two digits of a pair */
} td_eembc_hex_t;

typedef struct {
    char line[TD_EEMBC_LINE_MAX + 1u]; /* command being received, NUL-terminated */
    uint32_t len;                      /* characters in line[] */
    uint32_t dropped;                  /* characters past the buffer (over-long line) */
    uint8_t streaming;                 /* 1 while a long `db` data line is decoded on the fly */
    td_eembc_hex_t hex;                /* its decoder */

    uint32_t db_size;                  /* bytes announced by `db load`, 0 = no buffer */
    uint32_t db_pos;                   /* bytes received so far */
    uint8_t have_output;               /* 1 once an inference has run */

    uint64_t ticks;                    /* td_cycles_now() extended to 64 bits */
    uint32_t last_now;                 /* its last raw reading */
} td_eembc_t;

/* Prints the start-up lines (timestamp mode, init done, m-ready). */
void td_eembc_init(td_eembc_t *e);
/* One received byte; a '%' runs the command and prints its reply ending with m-ready. */
void td_eembc_feed(td_eembc_t *e, uint8_t c);
/* Extends the 32-bit counter; call more often than it wraps (the main loop does). */
void td_eembc_clock_update(td_eembc_t *e);
/* Microseconds since start-up from the extended counter and TD_CLOCK_HZ. */
uint64_t td_eembc_micros(td_eembc_t *e);

/* Benchmark label for m-model-[...]: TD_EEMBC_MODEL, or from the input shape. */
const char *td_eembc_model_name(void);

/* ---- text output without printf (td_eembc_text.c); lines are buffered until CR LF ---- */
void td_eembc_puts(const char *s);
void td_eembc_putn(const char *s, uint32_t n);
void td_eembc_put_u64(uint64_t v);
void td_eembc_put_i32(int32_t v);
void td_eembc_put_hex8(uint8_t v);
/* v with `decimals` digits after the point (at most 9), from its exact binary value,
 * rounded half away from zero; "inf", "-inf", "nan" for the non-finite. */
void td_eembc_put_f32(float v, uint32_t decimals);
/* text with bytes outside printable ASCII as '?', at most max characters then "..." */
void td_eembc_put_sanitized(const char *s, uint32_t max);
void td_eembc_endl(void);
void td_eembc_flush(void);
/* The platform's fault hook for this app: the report as one `e-[<text>]` line. */
void td_eembc_report_fault(const char *text);

#endif /* TD_EEMBC_H */
