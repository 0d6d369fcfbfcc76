/* td_kws_detect.c: see td_kws_detect.h. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "td_kws_detect.h"

int td_kws_detect_init(td_kws_detector_t *d, uint32_t n_labels, uint32_t avg_windows,
                       uint32_t first_keyword, float threshold, uint32_t suppress_ms)
{
    uint32_t k;
    if (n_labels == 0u || n_labels > TD_KWS_MAX_LABELS || avg_windows == 0u ||
        avg_windows > TD_KWS_MAX_AVG || first_keyword >= n_labels) {
        return -1;
    }
    d->n_labels = n_labels;
    d->avg_windows = avg_windows;
    d->first_keyword = first_keyword;
    d->keyword_end = n_labels;
    for (k = 0; k < TD_KWS_MAX_LABELS; k++) {
        d->threshold[k] = threshold;
    }
    d->suppress_ms = suppress_ms;
    td_kws_detect_reset(d);
    return 0;
}

void td_kws_detect_reset(td_kws_detector_t *d)
{
    uint32_t i, k;
    for (i = 0; i < TD_KWS_MAX_AVG; i++) {
        for (k = 0; k < TD_KWS_MAX_LABELS; k++) {
            d->hist[i][k] = 0.0f;
        }
    }
    for (k = 0; k < TD_KWS_MAX_LABELS; k++) {
        d->avg[k] = 0.0f;
    }
    d->seen = 0u;
    d->next = 0u;
    d->last_event_ms = 0u;
    d->last_label = 0u;
    d->have_event = 0u;
    d->released = 0u;
}

int td_kws_detect_set_keywords(td_kws_detector_t *d, uint32_t first, uint32_t end)
{
    if (first >= end || end > d->n_labels) {
        return -1;
    }
    d->first_keyword = first;
    d->keyword_end = end;
    return 0;
}

int td_kws_detect_set_threshold(td_kws_detector_t *d, uint32_t label, float threshold)
{
    if (label >= d->n_labels || !(threshold > 0.0f && threshold <= 1.0f)) {
        return -1;
    }
    d->threshold[label] = threshold;
    return 0;
}

int td_kws_detect_push(td_kws_detector_t *d, const float *probs, uint32_t time_ms,
                       uint16_t *label, float *score)
{
    uint32_t i, k, n, slot, best;
    for (k = 0; k < d->n_labels; k++) {
        d->hist[d->next][k] = probs[k];
    }
    d->next = (d->next + 1u) % d->avg_windows;
    if (d->seen < 0xFFFFFFFFu) {
        d->seen++;
    }
    n = d->seen < d->avg_windows ? d->seen : d->avg_windows;
    /* oldest first: the oldest stored window is at `next` once the history is full */
    for (k = 0; k < d->n_labels; k++) {
        float sum = 0.0f;
        for (i = 0; i < n; i++) {
            slot = (d->seen < d->avg_windows) ? i : (d->next + i) % d->avg_windows;
            sum = sum + d->hist[slot][k];
        }
        d->avg[k] = sum / (float)n;
    }
    best = d->first_keyword;
    for (k = d->first_keyword + 1u; k < d->keyword_end; k++) {
        if (d->avg[k] > d->avg[best]) {
            best = k;
        }
    }
    if (d->have_event && d->avg[d->last_label] < 0.5f * d->threshold[d->last_label]) {
        d->released = 1u;
    }
    if (d->seen < d->avg_windows || d->avg[best] < d->threshold[best]) {
        return 0;
    }
    if (d->have_event && ((uint32_t)(time_ms - d->last_event_ms) < d->suppress_ms ||
                          (best == d->last_label && !d->released))) {
        return 0;
    }
    d->have_event = 1u;
    d->released = 0u;
    d->last_label = (uint16_t)best;
    d->last_event_ms = time_ms;
    *label = (uint16_t)best;
    *score = d->avg[best];
    return 1;
}
