// A shared library built with -fvisibility=hidden that uses loupe on its own,
// as a plugin of a host program would. Only these functions are exported.
#pragma once

#define LOUPE_TEST_PLUGIN_EXPORT __attribute__((visibility("default")))

extern "C" {
/// Address of loupe's hot state and runtime pointer as the plugin sees them.
LOUPE_TEST_PLUGIN_EXPORT const void* plugin_hot_state_address();
LOUPE_TEST_PLUGIN_EXPORT const void* plugin_runtime_pointer_address();
/// Records `n` zones named "plugin-zone" on the calling thread.
LOUPE_TEST_PLUGIN_EXPORT void plugin_record_zones(int n);
/// Starts a session inside the plugin, lets `host_work` record, stops it and
/// returns how many events named `name` it received (or -1 on failure).
LOUPE_TEST_PLUGIN_EXPORT long plugin_session_count(void (*host_work)(), const char* name);
}
