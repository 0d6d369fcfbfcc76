/*
 * The fault report hook of td_platform.h, shared by every family: one static pointer, set by
 * the application before anything can fault and read only by the platform's fault paths.
 */
#include <stddef.h>

#include "td_platform.h"

static td_fault_hook_t fault_hook;

void td_platform_set_fault_hook(td_fault_hook_t hook)
{
    fault_hook = hook;
}

void td_platform_report_fault(const char *text)
{
    if (fault_hook != NULL)
        fault_hook(text);
}
