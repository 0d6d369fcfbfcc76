/* td_link: frame decoder/encoder and dispatch step; see td_link.h and docs/protocol.md. */
#include "td_link.h"

#include <stdarg.h>
#include <stddef.h>

#include "td_platform.h"

uint16_t td_crc16(const uint8_t *data, uint32_t n, uint16_t crc)
{
    /* CRC-16/CCITT-FALSE bit by bit: slower than a table, 512 bytes smaller. */
    for (uint32_t i = 0; i < n; ++i) {
        crc ^= (uint16_t)((uint16_t)data[i] << 8);
        for (int b = 0; b < 8; ++b)
            crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

/* ---- encoder: COBS on the fly, one block of at most 254 data bytes buffered ---- */

typedef struct {
    uint8_t block[255]; /* block[0] is the code byte */
    uint8_t n;          /* data bytes in block */
} td_cobs_writer_t;

static void cobs_flush(td_cobs_writer_t *w)
{
    w->block[0] = (uint8_t)(w->n + 1u);
    td_uart_write(w->block, (uint32_t)w->n + 1u);
    w->n = 0;
}

static void cobs_put(td_cobs_writer_t *w, const uint8_t *data, uint32_t len)
{
    for (uint32_t i = 0; i < len; ++i) {
        if (data[i] == 0) {
            cobs_flush(w);
            continue;
        }
        w->block[1u + w->n++] = data[i];
        if (w->n == 254u) {
            /* a full block has code 0xFF and no implied zero after it */
            w->block[0] = 0xFFu;
            td_uart_write(w->block, 255u);
            w->n = 0;
        }
    }
}

/* ---- frames packed from their fields as they are encoded (no payload buffer) ---- */

typedef struct {
    td_cobs_writer_t w;
    uint16_t crc;  /* CRC-16 of everything written so far */
    uint16_t left; /* payload bytes still to write; the rest is dropped */
} td_tx_t;

static void tx_put(td_tx_t *t, const void *src, uint32_t n)
{
    const uint8_t *s = (const uint8_t *)src;
    if (n > t->left)
        n = t->left;
    t->left = (uint16_t)(t->left - n);
    t->crc = td_crc16(s, n, t->crc);
    cobs_put(&t->w, s, n);
}

static void put_le(uint8_t *v, uint32_t x, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i)
        v[i] = (uint8_t)(x >> (8u * i));
}

/* The bytes of s up to its NUL, at most max */
static uint32_t text_len(const char *s, uint32_t max)
{
    uint32_t n = 0;
    while (s && n < max && s[n])
        ++n;
    return n;
}

/* Walks the fields of td_link_sendf over ap: writes them to t (NULL: only counts) and
 * returns the payload length, so that one walk serves both passes. */
static uint32_t walk_fields(td_tx_t *t, const char *layout, va_list ap)
{
    uint32_t len = 0;
    for (; *layout; ++layout) {
        uint8_t v[8];
        const void *src = v;
        uint32_t n = 0, count = 1;
        switch (*layout) {
        case 'b':
            v[0] = (uint8_t)va_arg(ap, int);
            n = 1u;
            break;
        case 'h':
            put_le(v, (uint32_t)va_arg(ap, int), 2u);
            n = 2u;
            break;
        case 'w':
            put_le(v, va_arg(ap, uint32_t), 4u);
            n = 4u;
            break;
        case 'q': {
            const uint64_t q = va_arg(ap, uint64_t);
            put_le(v, (uint32_t)q, 4u);
            put_le(v + 4, (uint32_t)(q >> 32), 4u);
            n = 8u;
            break;
        }
        case 'f': {
            union {
                float f;
                uint32_t u;
            } x; /* all supported targets are little-endian IEEE 754 */
            x.f = *va_arg(ap, const float *);
            put_le(v, x.u, 4u);
            n = 4u;
            break;
        }
        case 'x':
            src = va_arg(ap, const void *);
            n = va_arg(ap, uint32_t);
            break;
        case 'W': {
            const uint32_t *words = va_arg(ap, const uint32_t *);
            count = va_arg(ap, uint32_t);
            for (uint32_t k = 0; t && k < count; ++k) {
                put_le(v, words[k], 4u);
                tx_put(t, v, 4u);
            }
            len += 4u * count;
            continue;
        }
        case 's':
        case 't': {
            const char *text = va_arg(ap, const char *);
            n = text_len(text, va_arg(ap, uint32_t));
            src = text;
            if (*layout == 's') {
                v[0] = (uint8_t)n;
                if (t)
                    tx_put(t, v, 1u);
                ++len;
            }
            break;
        }
        default:
            break;
        }
        if (t)
            tx_put(t, src, n);
        len += n;
    }
    return len;
}

void td_link_sendf(uint8_t type, uint8_t seq, const char *layout, ...)
{
    static const uint8_t delim = 0;
    td_tx_t t;
    uint8_t head[TD_LINK_HEADER];
    uint8_t tail[2];
    uint32_t len;
    va_list ap, count;

    va_start(ap, layout);
    va_copy(count, ap);
    len = walk_fields(NULL, layout, count);
    va_end(count);
    if (len > TD_LINK_MAX_PAYLOAD)
        len = TD_LINK_MAX_PAYLOAD;
    head[0] = type;
    head[1] = seq;
    put_le(&head[2], len, 2u);
    t.w.n = 0;
    t.crc = 0xFFFFu;
    t.left = TD_LINK_HEADER;
    tx_put(&t, head, TD_LINK_HEADER);
    t.left = (uint16_t)len;
    walk_fields(&t, layout, ap);
    va_end(ap);
    put_le(tail, t.crc, 2u);
    cobs_put(&t.w, tail, 2u);
    cobs_flush(&t.w);
    td_uart_write(&delim, 1u);
}

void td_link_send(uint8_t type, uint8_t seq, const uint8_t *payload, uint16_t len)
{
    td_link_sendf(type, seq, "x", payload, (uint32_t)len);
}

void td_link_ack(uint8_t seq, uint8_t acked_type)
{
    td_link_send(TD_MSG_ACK, seq, &acked_type, 1u);
}

void td_link_error(uint8_t seq, uint8_t code, uint8_t ref_type, const char *text)
{
    /* the text within 62 bytes: an ERROR's payload stays within 64 */
    td_link_sendf(TD_MSG_ERROR, seq, "bbt", code, ref_type, text, (uint32_t)62u);
}

void td_link_log(uint8_t level, const char *text)
{
    td_link_sendf(TD_MSG_LOG, 0, "bt", level, text, (uint32_t)(TD_LINK_MAX_PAYLOAD - 1u));
}

void td_link_event(uint16_t label, float score, uint32_t timestamp_ms)
{
    td_link_sendf(TD_MSG_EVENT, 0, "hfw", label, &score, timestamp_ms);
}

/* ---- decoder ---- */

/* The platform's fault reports become LOG frames of level FAULT. */
static void td_link_fault_report(const char *text)
{
    td_link_log(TD_LOG_FAULT, text);
}

void td_link_init(td_link_t *link)
{
    td_platform_set_fault_hook(td_link_fault_report);
    link->rx_len = 0;
    link->overflow = 0;
    link->frames_ok = 0;
    link->frames_bad = 0;
}

/* Decodes rx[0..n) in place (COBS output is never longer than its input); returns the
 * decoded length or -1 if the block is not valid COBS. */
static int32_t cobs_decode_inplace(uint8_t *buf, uint32_t n)
{
    uint32_t in = 0, out = 0;
    while (in < n) {
        uint32_t code = buf[in];
        if (code == 0u || in + code > n)
            return -1;
        ++in;
        for (uint32_t k = 1; k < code; ++k)
            buf[out++] = buf[in++];
        if (code != 0xFFu && in < n)
            buf[out++] = 0;
    }
    return (int32_t)out;
}

static void reject(td_link_t *link, uint8_t seq, uint8_t code, uint8_t type, const char *why)
{
    link->frames_bad++;
    td_link_error(seq, code, type, why);
}

/* Validates the block in rx; returns 1 with *frame filled when it is a good frame. */
static int finish_block(td_link_t *link, td_frame_t *frame)
{
    int32_t n;
    uint16_t len, crc;

    if (link->overflow) {
        link->overflow = 0;
        link->rx_len = 0;
        reject(link, 0, TD_ERR_OVERSIZED, 0, "frame longer than the receive buffer");
        return 0;
    }
    if (link->rx_len == 0)
        return 0; /* lone delimiter: a resync, not an error */
    n = cobs_decode_inplace(link->rx, link->rx_len);
    link->rx_len = 0;
    if (n < 0) {
        reject(link, 0, TD_ERR_COBS, 0, "malformed COBS block");
        return 0;
    }
    if ((uint32_t)n < TD_LINK_HEADER + 2u) {
        reject(link, 0, TD_ERR_TRUNCATED, 0, "frame shorter than header and CRC");
        return 0;
    }
    len = (uint16_t)(link->rx[2] | ((uint16_t)link->rx[3] << 8));
    if (len > TD_LINK_MAX_PAYLOAD || (uint32_t)n != TD_LINK_HEADER + len + 2u) {
        reject(link, link->rx[1], TD_ERR_LENGTH, link->rx[0],
               "length field does not match the frame");
        return 0;
    }
    crc = (uint16_t)(link->rx[n - 2] | ((uint16_t)link->rx[n - 1] << 8));
    if (td_crc16(link->rx, (uint32_t)n - 2u, 0xFFFFu) != crc) {
        reject(link, link->rx[1], TD_ERR_CRC, link->rx[0], "CRC mismatch");
        return 0;
    }
    frame->type = link->rx[0];
    frame->seq = link->rx[1];
    frame->len = len;
    frame->payload = &link->rx[TD_LINK_HEADER];
    link->frames_ok++;
    return 1;
}

int td_link_poll(td_link_t *link, td_frame_t *frame)
{
    uint8_t byte;
    while (td_uart_read(&byte)) {
        if (byte == 0u) {
            if (finish_block(link, frame))
                return 1;
            continue;
        }
        if (link->overflow)
            continue;
        if (link->rx_len >= TD_LINK_ENCODED_MAX) {
            link->overflow = 1;
            continue;
        }
        link->rx[link->rx_len++] = byte;
    }
    return 0;
}

int td_link_step(td_link_t *link, td_link_handler_t handler, void *ctx)
{
    td_frame_t f;
    if (!td_link_poll(link, &f))
        return 0;
    if (f.type == TD_MSG_PING) {
        /* beyond 255 bytes the echo is truncated to the frame's payload */
        td_link_sendf(TD_MSG_ACK, f.seq, "bx", TD_MSG_PING, f.payload, (uint32_t)f.len);
        return 1;
    }
    if (handler == 0 || handler(link, &f, ctx) == TD_LINK_UNHANDLED)
        td_link_error(f.seq, TD_ERR_UNKNOWN_TYPE, f.type, "unknown frame type");
    return 1;
}

/* ---- payload reader ---- */

void td_rd_init(td_rd_t *r, const td_frame_t *f)
{
    r->p = f->payload;
    r->len = f->len;
    r->pos = 0;
    r->short_read = 0;
}

static uint32_t rd_le(td_rd_t *r, uint32_t n)
{
    uint32_t v = 0;
    if ((uint32_t)r->pos + n > r->len) {
        r->short_read = 1;
        r->pos = r->len;
        return 0;
    }
    for (uint32_t i = 0; i < n; ++i)
        v |= (uint32_t)r->p[r->pos + i] << (8u * i);
    r->pos = (uint16_t)(r->pos + n);
    return v;
}

uint8_t td_rd_u8(td_rd_t *r) { return (uint8_t)rd_le(r, 1u); }
uint16_t td_rd_u16(td_rd_t *r) { return (uint16_t)rd_le(r, 2u); }
uint32_t td_rd_u32(td_rd_t *r) { return rd_le(r, 4u); }
