/*
 * The EEMBC runner's command set (performance mode) on the compiled model: name, profile,
 * help, timestamp, db load/data/print, infer, results. td_eembc.h states the wire format and
 * invariants; docs/eembc.md the replies.
 */
#include <stdint.h>
#include <string.h>

#include "model.h"
#include "td_eembc.h"
#include "td_platform.h"

/* the input bytes as the runner sends them: all model inputs, in order */
static uint8_t db_buf[TD_EEMBC_DB_BYTES];

static uint32_t input_bytes(void)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < TD_MODEL_NUM_INPUTS; ++i)
        n += td_model_inputs[i].bytes;
    return n;
}

/* ---- clock ---- */

void td_eembc_clock_update(td_eembc_t *e)
{
    uint32_t now = td_cycles_now();
    e->ticks += (uint32_t)(now - e->last_now);
    e->last_now = now;
}

uint64_t td_eembc_micros(td_eembc_t *e)
{
    const uint64_t hz = (uint64_t)TD_CLOCK_HZ;
    td_eembc_clock_update(e);
    /* split so that nothing overflows: (q * hz + r) ticks = q s + r / hz s */
    return (e->ticks / hz) * 1000000u + ((e->ticks % hz) * 1000000u) / hz;
}

static void timestamp(td_eembc_t *e)
{
    td_eembc_puts("m-lap-us-");
    td_eembc_put_u64(td_eembc_micros(e));
    td_eembc_endl();
}

/* ---- small parsing helpers ---- */

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Next blank-separated token of *p (NUL-terminated in place), or NULL at the end. */
static char *next_token(char **p)
{
    char *s = *p, *t;
    while (*s && is_blank(*s))
        ++s;
    if (!*s) {
        *p = s;
        return 0;
    }
    t = s;
    while (*s && !is_blank(*s))
        ++s;
    if (*s)
        *s++ = 0;
    *p = s;
    return t;
}

/* Decimal number 0..4294967295 with nothing else in the token; 1 if valid. */
static int parse_u32(const char *s, uint32_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return 0;
    for (; *s; ++s) {
        if (*s < '0' || *s > '9')
            return 0;
        v = v * 10u + (uint32_t)(*s - '0');
        if (v > 0xFFFFFFFFu)
            return 0;
    }
    *out = (uint32_t)v;
    return 1;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void error_begin(const char *what)
{
    td_eembc_puts("e-[");
    td_eembc_puts(what);
}

static void error_end(void)
{
    td_eembc_puts("]");
    td_eembc_endl();
}

static void error_line(const char *text)
{
    error_begin(text);
    error_end();
}

/* ---- db data decoding (shared by buffered lines and streamed long lines) ---- */

static void hex_start(td_eembc_hex_t *h) { memset(h, 0, sizeof *h); }

static void hex_feed(td_eembc_t *e, td_eembc_hex_t *h, char c)
{
    int v;
    if (h->bad_seen)
        return;
    if (is_blank(c)) {
        if (h->nibble) {
            h->split = 1;
            h->bad_seen = 1;
        }
        return;
    }
    v = hex_value(c);
    if (v < 0) {
        h->bad = (uint8_t)c;
        h->bad_seen = 1;
        return;
    }
    if (!h->nibble) {
        h->nibble = (uint8_t)(v + 1);
        return;
    }
    {
        uint32_t at = e->db_pos + h->count;
        /* staged past the committed position; bytes beyond the announced size are only
         * counted (the line is then rejected) */
        if (e->db_size && at < e->db_size)
            db_buf[at] = (uint8_t)(((h->nibble - 1) << 4) | v);
        h->count++;
        h->nibble = 0;
    }
}

static void feed_token(td_eembc_t *e, td_eembc_hex_t *h, const char *s)
{
    for (; *s; ++s)
        hex_feed(e, h, *s);
    hex_feed(e, h, ' ');
}

static void hex_finish(td_eembc_t *e, const td_eembc_hex_t *h)
{
    if (!e->db_size) {
        error_line("db: no input buffer, send 'db load N' first");
        return;
    }
    if (h->bad_seen && !h->split) {
        char c[2] = {(char)h->bad, 0};
        error_begin("db: invalid hex digit '");
        td_eembc_put_sanitized(c, 1u);
        td_eembc_puts("', nothing loaded");
        error_end();
        return;
    }
    if (h->split || h->nibble) {
        error_line("db: odd number of hex digits, nothing loaded");
        return;
    }
    if (h->count == 0u) {
        error_line("db: no hex digits");
        return;
    }
    if (h->count > e->db_size - e->db_pos) {
        error_begin("db: ");
        td_eembc_put_u64(h->count);
        td_eembc_puts(" bytes but only ");
        td_eembc_put_u64(e->db_size - e->db_pos);
        td_eembc_puts(" of ");
        td_eembc_put_u64(e->db_size);
        td_eembc_puts(" expected remain, nothing loaded");
        error_end();
        return;
    }
    e->db_pos += h->count;
    if (e->db_pos == e->db_size) {
        td_eembc_puts("m-load-done");
        td_eembc_endl();
    }
}

/* "db" then blanks then a hex digit: a data line (as opposed to "db load" / "db print") */
static int is_db_data(const char *line, uint32_t len)
{
    uint32_t i = 0;
    if (len < 3u || line[0] != 'd' || line[1] != 'b' || !is_blank(line[2]))
        return 0;
    for (i = 2; i < len && is_blank(line[i]); ++i) {
    }
    if (i == len)
        return 0;
    for (; i < len; ++i) {
        if (!is_blank(line[i]) && hex_value(line[i]) < 0)
            return 0;
    }
    return 1;
}

/* ---- commands ---- */

const char *td_eembc_model_name(void)
{
#ifdef TD_EEMBC_MODEL
    return TD_EEMBC_MODEL;
#else
    /* the four MLPerf Tiny v1 benchmarks by their input shape (NHWC / N x features) */
    const td_tensor_desc_t *in = &td_model_inputs[0];
    uint32_t elems = 1;
    for (uint32_t i = 0; i < in->rank; ++i)
        elems *= (uint32_t)in->dims[i];
    if (TD_MODEL_NUM_INPUTS == 1u && in->rank == 4u && in->dims[3] == 3) {
        if (in->dims[1] == 96 && in->dims[2] == 96)
            return "vww01";
        if (in->dims[1] == 32 && in->dims[2] == 32)
            return "ic01";
    }
    if (TD_MODEL_NUM_INPUTS == 1u && elems == 490u)
        return "kws01";
    if (TD_MODEL_NUM_INPUTS == 1u && elems == 640u)
        return "ad01";
    return "unknown";
#endif
}

static void cmd_help(void)
{
    static const char *const lines[] = {
        TD_EEMBC_FW_VERSION,
        "",
        "help          : print this information",
        "name          : print the name of the device",
        "profile       : print the firmware profile and the model",
        "timestamp     : print m-lap-us-<microseconds since start>",
        "db load N     : expect N input bytes (the model's input size)",
        "db HH[HH]*    : append hex bytes (any number of pairs per command)",
        "db print [i] [n] : print n bytes from offset i as hex",
        "infer N [W=10]: copy the input, W warm-up then N timed inferences",
        "results       : print the dequantized outputs",
    };
    for (uint32_t i = 0; i < sizeof lines / sizeof lines[0]; ++i) {
        td_eembc_puts(lines[i]);
        td_eembc_endl();
    }
}

static void cmd_profile(void)
{
    td_eembc_puts("m-profile-[" TD_EEMBC_FW_VERSION "]");
    td_eembc_endl();
    td_eembc_puts("m-model-[");
    td_eembc_puts(td_eembc_model_name());
    td_eembc_puts("]");
    td_eembc_endl();
    /* what was compiled, for logs: the model file's hash, board, input and output bytes */
    td_eembc_puts("m-tinydeploy-[sha256 " TD_MODEL_SHA256 ", board " TD_BOARD_ID ", input ");
    td_eembc_put_u64(input_bytes());
    td_eembc_puts(" B, arena ");
    td_eembc_put_u64(TD_MODEL_ARENA_BYTES);
    td_eembc_puts(" B, counter ");
    td_eembc_puts(td_cycles_unit());
    td_eembc_puts("]");
    td_eembc_endl();
}

/* A refused 'db load N': the buffer is emptied and the error names N and the limit. */
static void db_refuse(td_eembc_t *e, uint32_t n, const char *mid, uint32_t limit,
                      const char *tail)
{
    e->db_size = 0;
    e->db_pos = 0;
    error_begin("db load: ");
    td_eembc_put_u64(n);
    td_eembc_puts(mid);
    td_eembc_put_u64(limit);
    td_eembc_puts(tail);
    error_end();
}

static void cmd_db_load(td_eembc_t *e, const char *arg, const char *extra)
{
    uint32_t n, want = input_bytes();
    if (!arg || extra || !parse_u32(arg, &n)) {
        error_line("db load: takes the number of bytes, e.g. 'db load 490'");
        return;
    }
    if (n != want) {
        db_refuse(e, n, " bytes but the model's input is ", want, " bytes");
        return;
    }
    if (n > TD_EEMBC_DB_BYTES) {
        db_refuse(e, n, " bytes exceed the ", TD_EEMBC_DB_BYTES,
                  "-byte buffer, define TD_EEMBC_DB_BYTES");
        return;
    }
    e->db_size = n;
    e->db_pos = 0;
    td_eembc_puts("m-[Expecting ");
    td_eembc_put_u64(n);
    td_eembc_puts(" bytes]");
    td_eembc_endl();
}

static void cmd_db_print(td_eembc_t *e, const char *a, const char *b, const char *extra)
{
    uint32_t off = 0, n;
    if (!e->db_size) {
        error_line("db print: no input buffer, send 'db load N' first");
        return;
    }
    n = e->db_size;
    if (extra || (a && !parse_u32(a, &off)) || (b && !parse_u32(b, &n))) {
        error_line("db print: takes [offset] [count], decimal");
        return;
    }
    if (off > e->db_size) {
        error_begin("db print: offset ");
        td_eembc_put_u64(off);
        td_eembc_puts(" past the ");
        td_eembc_put_u64(e->db_size);
        td_eembc_puts("-byte buffer");
        error_end();
        return;
    }
    if (!b)
        n = e->db_size - off;
    if (n > e->db_size - off)
        n = e->db_size - off;
    /* 8 bytes a line, as the reference: m-buffer-xx-xx-... */
    for (uint32_t i = 0; i < n; ++i) {
        if (i % 8u == 0u)
            td_eembc_puts("m-buffer-");
        td_eembc_put_hex8(db_buf[off + i]);
        if (i % 8u == 7u || i + 1u == n)
            td_eembc_endl();
        else
            td_eembc_puts("-");
    }
}

static void copy_input(void)
{
    uint32_t at = 0;
    for (uint32_t i = 0; i < TD_MODEL_NUM_INPUTS; ++i) {
        memcpy(td_model_input(i), db_buf + at, td_model_inputs[i].bytes);
        at += td_model_inputs[i].bytes;
    }
}

static float element(const td_tensor_desc_t *t, const void *data, uint32_t i)
{
    switch (t->dtype) {
    case TD_DTYPE_INT8:
        return (float)((int32_t)((const int8_t *)data)[i] - t->zero_point) * t->scale;
    case TD_DTYPE_INT16:
        return (float)((int32_t)((const int16_t *)data)[i] - t->zero_point) * t->scale;
    case TD_DTYPE_INT32: {
        int32_t q = ((const int32_t *)data)[i];
        return t->scale != 0.0f ? (float)((int64_t)q - t->zero_point) * t->scale : (float)q;
    }
    case TD_DTYPE_FLOAT32:
        return ((const float *)data)[i];
    default: /* uint8 (3) and others: raw bytes, dequantized when the tensor has a scale */
        return t->scale != 0.0f
                   ? (float)((int32_t)((const uint8_t *)data)[i] - t->zero_point) * t->scale
                   : (float)((const uint8_t *)data)[i];
    }
}

static uint32_t element_size(uint8_t dtype)
{
    switch (dtype) {
    case TD_DTYPE_INT16:
        return 2u;
    case TD_DTYPE_INT32:
    case TD_DTYPE_FLOAT32:
        return 4u;
    default:
        return 1u;
    }
}

static void print_results(void)
{
    uint32_t printed = 0;
    td_eembc_puts("m-results-[");
    for (uint32_t o = 0; o < TD_MODEL_NUM_OUTPUTS; ++o) {
        const td_tensor_desc_t *t = &td_model_outputs[o];
        const void *data = td_model_output(o);
        uint32_t n = t->bytes / element_size(t->dtype);
        for (uint32_t i = 0; i < n; ++i) {
            if (printed++)
                td_eembc_puts(",");
            td_eembc_put_f32(element(t, data, i), TD_EEMBC_DECIMALS);
        }
    }
    td_eembc_puts("]");
    td_eembc_endl();
}

static void cmd_infer(td_eembc_t *e, const char *a, const char *b, const char *extra)
{
    uint32_t n = 1, w = 10;
    uint64_t t0, t1;
    if (extra || (a && (!parse_u32(a, &n) || n == 0u)) || (b && !parse_u32(b, &w))) {
        error_line("infer: takes N > 0 inferences and W >= 0 warm-ups, e.g. 'infer 10 1'");
        return;
    }
    if (!e->db_size || e->db_pos != e->db_size) {
        error_begin("infer: input not loaded (");
        td_eembc_put_u64(e->db_pos);
        td_eembc_puts(" of ");
        td_eembc_put_u64(input_bytes());
        td_eembc_puts(" bytes), send 'db load N' and 'db' data first");
        error_end();
        return;
    }
    td_eembc_puts("m-warmup-start-");
    td_eembc_put_u64(w);
    td_eembc_endl();
    for (uint32_t i = 0; i < w; ++i) {
        copy_input();
        td_model_invoke();
        td_eembc_clock_update(e);
    }
    td_eembc_puts("m-warmup-done");
    td_eembc_endl();
    td_eembc_puts("m-infer-start-");
    td_eembc_put_u64(n);
    td_eembc_endl();
    timestamp(e);
    t0 = e->ticks;
    for (uint32_t i = 0; i < n; ++i) {
        copy_input();
        td_model_invoke();
        td_eembc_clock_update(e);
    }
    t1 = e->ticks;
    timestamp(e);
    e->have_output = 1;
    td_eembc_puts("m-infer-done");
    td_eembc_endl();
    /* the raw counter total of the timed runs, in the platform's unit */
    td_eembc_puts("m-infer-ticks-[");
    td_eembc_put_u64(t1 - t0);
    td_eembc_puts(" ");
    td_eembc_puts(td_cycles_unit());
    td_eembc_puts(" at ");
    td_eembc_put_u64((uint64_t)TD_CLOCK_HZ);
    td_eembc_puts(" Hz]");
    td_eembc_endl();
    /* the stack's painted high-water mark and its reserve (0 on the host build) */
    td_eembc_puts("m-stack-[peak ");
    td_eembc_put_u64(td_stack_peak());
    td_eembc_puts(" B of ");
    td_eembc_put_u64(td_stack_size());
    td_eembc_puts(" B]");
    td_eembc_endl();
    print_results();
}

static void run_line(td_eembc_t *e)
{
    char *p = e->line, *cmd, *a, *b, *extra;
    cmd = next_token(&p);
    if (!cmd)
        return; /* an empty command: only m-ready (the runner sends '%' to flush) */
    a = next_token(&p);
    b = next_token(&p);
    extra = next_token(&p);
    if (!strcmp(cmd, "name")) {
        td_eembc_puts("m-name-dut-[" TD_EEMBC_VENDOR "]");
        td_eembc_endl();
    } else if (!strcmp(cmd, "timestamp")) {
        timestamp(e);
    } else if (!strcmp(cmd, "profile")) {
        cmd_profile();
    } else if (!strcmp(cmd, "help")) {
        cmd_help();
    } else if (!strcmp(cmd, "results")) {
        if (e->have_output)
            print_results();
        else
            error_line("results: no inference yet, send 'infer N W' first");
    } else if (!strcmp(cmd, "infer")) {
        cmd_infer(e, a, b, extra);
    } else if (!strcmp(cmd, "db")) {
        if (!a) {
            error_line("db: needs a subcommand: load N, print [i] [n], or hex data");
        } else if (!strcmp(a, "load")) {
            cmd_db_load(e, b, extra);
        } else if (!strcmp(a, "print")) {
            cmd_db_print(e, b, extra, extra ? next_token(&p) : 0);
        } else {
            /* data: every token after "db" is hex (blanks between pairs are allowed) */
            td_eembc_hex_t h;
            const char *tok[3];
            tok[0] = a;
            tok[1] = b;
            tok[2] = extra;
            hex_start(&h);
            for (uint32_t i = 0; i < 3u && tok[i]; ++i)
                feed_token(e, &h, tok[i]);
            while ((tok[0] = next_token(&p)) != 0)
                feed_token(e, &h, tok[0]);
            hex_finish(e, &h);
        }
    } else {
        error_begin("Unknown command: ");
        td_eembc_put_sanitized(cmd, 32u);
        error_end();
    }
}

static void ready(void)
{
    td_eembc_puts("m-ready");
    td_eembc_endl();
}

void td_eembc_init(td_eembc_t *e)
{
    memset(e, 0, sizeof *e);
    e->last_now = td_cycles_now();
    td_eembc_puts("m-timestamp-mode-performance");
    td_eembc_endl();
    if (input_bytes() > TD_EEMBC_DB_BYTES) {
        error_begin("the model's input of ");
        td_eembc_put_u64(input_bytes());
        td_eembc_puts(" bytes exceeds the ");
        td_eembc_put_u64(TD_EEMBC_DB_BYTES);
        td_eembc_puts("-byte db buffer, define TD_EEMBC_DB_BYTES");
        error_end();
    }
    td_eembc_puts("m-init-done");
    td_eembc_endl();
    ready();
}

void td_eembc_feed(td_eembc_t *e, uint8_t c)
{
    if (c == '%') {
        if (e->streaming) {
            hex_finish(e, &e->hex);
        } else if (e->dropped) {
            error_begin("Command too long: ");
            td_eembc_put_u64((uint64_t)e->len + e->dropped);
            td_eembc_puts(" characters, at most ");
            td_eembc_put_u64(TD_EEMBC_LINE_MAX);
            error_end();
        } else {
            e->line[e->len] = 0;
            run_line(e);
        }
        ready();
        e->len = 0;
        e->dropped = 0;
        e->streaming = 0;
        return;
    }
    if (e->streaming) {
        hex_feed(e, &e->hex, (char)c);
        return;
    }
    if (e->dropped == 0u && e->len < TD_EEMBC_LINE_MAX) {
        e->line[e->len++] = (char)c;
        return;
    }
    if (e->dropped == 0u && is_db_data(e->line, e->len)) {
        /* a long data line: decode what is buffered, then every further byte as it comes */
        uint32_t i = 2;
        hex_start(&e->hex);
        for (; i < e->len; ++i)
            hex_feed(e, &e->hex, e->line[i]);
        hex_feed(e, &e->hex, (char)c);
        e->streaming = 1;
        return;
    }
    if (e->dropped < 0xFFFFFFFFu - TD_EEMBC_LINE_MAX)
        e->dropped++;
}
