/*
 * td_link.h for the eembc app: the part of the link API that the platform layer calls
 * (fault and signal reports), without the framed protocol.
 *
 * Why: the eembc app speaks the EEMBC runner's text protocol on the serial port, so the
 * binary protocol library (firmware/link/) is not in its project, yet the platform layer
 * reports faults through td_link_log() and formats them with td_fmt_*(). This header keeps
 * those signatures (same names as firmware/link/td_link.h, which is never on the same
 * include path) and td_eembc_report.c implements them as one text line, `e-[fault ...]`,
 * which a runner or a terminal shows as an error.
 */
#ifndef TD_LINK_H
#define TD_LINK_H

#include <stdint.h>

#include "td_fmt.h"

enum { TD_LOG_DEBUG = 0, TD_LOG_INFO = 1, TD_LOG_WARN = 2, TD_LOG_ERROR = 3, TD_LOG_FAULT = 4 };

/* Writes `e-[<text>]` (faults and errors) or `m-[<text>]` (other levels) and CR LF. */
void td_link_log(uint8_t level, const char *text);

/* Append to a NUL-terminated string in [dst, end) without printf; return the new end. */

#endif /* TD_LINK_H */
