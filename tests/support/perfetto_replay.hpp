// Test helper: reads a Perfetto trace the way trace_processor does for the
// parts loupe writes (packet sequences, interned data, incremental clocks,
// track descriptors, slice begin/end, instants, counters, debug annotations)
// and rebuilds the slices, so tests can compare them with what was recorded.
// Independent of the writer: it knows only the wire format and the schema's
// field numbers, and inflates compressed packets with zlib (a reference
// implementation, not loupe's compressor). Any malformed input is reported
// in model::error.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace loupe_test::perfetto {

struct field {
    std::uint32_t number = 0;
    std::uint32_t wire = 0;
    std::uint64_t value = 0;    // varint or fixed64
    std::string_view bytes;     // length-delimited
};

/// Splits one message into its fields; sets `ok` false on malformed input.
inline std::vector<field> parse(std::string_view data, bool& ok) {
    std::vector<field> out;
    std::size_t i = 0;
    auto varint = [&](std::uint64_t& v) {
        v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (i >= data.size()) return false;
            const auto b = static_cast<unsigned char>(data[i++]);
            v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) return true;
        }
        return false;
    };
    while (ok && i < data.size()) {
        std::uint64_t key;
        if (!varint(key)) {
            ok = false;
            break;
        }
        field f;
        f.number = static_cast<std::uint32_t>(key >> 3);
        f.wire = static_cast<std::uint32_t>(key & 7);
        if (f.wire == 0) {
            ok = varint(f.value);
        } else if (f.wire == 1) {
            if (data.size() - i < 8) {
                ok = false;
                break;
            }
            for (int b = 0; b < 8; ++b) f.value |= static_cast<std::uint64_t>(static_cast<unsigned char>(data[i + b])) << (8 * b);
            i += 8;
        } else if (f.wire == 2) {
            std::uint64_t n;
            if (!varint(n) || n > data.size() - i) {
                ok = false;
                break;
            }
            f.bytes = data.substr(i, n);
            i += n;
        } else {
            ok = false;
        }
        out.push_back(f);
    }
    return out;
}

struct slice {
    std::string name;
    std::uint64_t begin = 0, end = 0;
    int depth = 0;
    std::map<std::string, std::string> args;
};
struct instant {
    std::string name;
    std::uint64_t time = 0;
    std::map<std::string, std::string> args;
    std::vector<std::uint64_t> flow_ids;              // TrackEvent.flow_ids
    std::vector<std::uint64_t> terminating_flow_ids;  // TrackEvent.terminating_flow_ids
};
struct counter_value {
    std::string track;
    std::uint64_t time = 0;
    double value = 0;
};
struct thread_track {
    std::int64_t tid = 0;
    std::string name;
    std::vector<slice> slices;  // in begin order
    std::vector<instant> instants;
    std::vector<counter_value> counters;
};
struct model {
    bool ok = true;
    std::string error;
    std::string process_name;
    std::int64_t pid = 0;
    std::map<std::uint64_t, std::uint64_t> clock_snapshot;  // builtin clock id -> timestamp (sequence 1)
    std::map<std::uint64_t, thread_track> threads;           // by track uuid
    std::vector<instant> process_instants;
    std::map<std::string, std::uint64_t> process_instant_counts;  // annotation "count" per name
};

/// Inflates one zlib stream; false when it is not valid.
inline bool inflate_zlib(std::string_view in, std::string& out) {
    z_stream z{};
    if (inflateInit(&z) != Z_OK) return false;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    char buf[65536];
    int rc;
    do {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
    } while (rc == Z_OK);
    inflateEnd(&z);
    return rc == Z_STREAM_END && z.avail_in == 0;
}

/// The packets of a serialized Trace with every compressed_packets group
/// inflated in place, as trace_processor reads them. `compressed_groups`
/// counts the groups and their largest size.
struct unpacked {
    std::string packets;  // a serialized Trace without compressed packets
    std::size_t compressed_groups = 0;
    std::size_t largest_group = 0;
    std::string error;
};
inline unpacked unpack(std::string_view trace) {
    unpacked u;
    bool ok = true;
    for (const field& p : parse(trace, ok)) {
        bool pok = true;
        std::string_view compressed;
        for (const field& f : parse(p.bytes, pok)) {
            if (f.number == 50 && f.wire == 2) compressed = f.bytes;
        }
        if (compressed.data() == nullptr) {
            u.packets += '\x0a';
            std::uint64_t n = p.bytes.size();
            while (n >= 0x80) u.packets += static_cast<char>((n & 0x7f) | 0x80), n >>= 7;
            u.packets += static_cast<char>(n);
            u.packets.append(p.bytes);
            continue;
        }
        ++u.compressed_groups;
        u.largest_group = std::max(u.largest_group, p.bytes.size() + 4);
        if (!inflate_zlib(compressed, u.packets)) u.error = "compressed_packets that zlib cannot inflate";
    }
    if (!ok) u.error = "malformed trace";
    return u;
}

/// Replays a serialized perfetto.protos.Trace.
inline model replay(std::string_view compressed_or_not) {
    const unpacked u = unpack(compressed_or_not);
    const std::string_view trace = u.packets;
    model m;
    auto fail = [&](const std::string& why) {
        if (m.ok) m.error = why;
        m.ok = false;
    };
    if (!u.error.empty()) fail(u.error);
    struct sequence_state {
        std::uint64_t default_track = 0;
        std::uint64_t default_clock = 0;
        std::uint64_t incremental_time = 0;
        bool has_incremental = false;
        std::map<std::uint64_t, std::string> names, annotation_names, values;
        std::vector<std::size_t> open;  // indexes into the track's slices
    };
    std::map<std::uint64_t, sequence_state> sequences;
    std::map<std::uint64_t, std::string> counter_tracks;  // uuid -> name
    std::uint64_t process_uuid = 0;
    bool ok = true;
    for (const field& p : parse(trace, ok)) {
        if (p.number != 1 || p.wire != 2) fail("top-level field other than packet");
        bool pok = true;
        const std::vector<field> packet = parse(p.bytes, pok);
        if (!pok) fail("malformed packet");
        std::uint64_t seq = 0, ts = 0, ts_clock = 0;
        bool has_ts = false;
        for (const field& f : packet) {
            if (f.number == 10) seq = f.value;
            if (f.number == 8) ts = f.value, has_ts = true;
            if (f.number == 58) ts_clock = f.value;
        }
        if (seq == 0) fail("packet without trusted_packet_sequence_id");
        sequence_state& s = sequences[seq];
        for (const field& f : packet) {
            if (f.number == 13 && (f.value & 1)) s = sequence_state{};
        }
        for (const field& f : packet) {
            bool k = true;
            if (f.number == 59) {  // defaults
                for (const field& d : parse(f.bytes, k)) {
                    if (d.number == 58) s.default_clock = d.value;
                    if (d.number == 11) {
                        for (const field& e : parse(d.bytes, k)) {
                            if (e.number == 11) s.default_track = e.value;
                        }
                    }
                }
            } else if (f.number == 6) {  // clock snapshot
                for (const field& c : parse(f.bytes, k)) {
                    std::uint64_t id = 0, t = 0;
                    bool incremental = false;
                    for (const field& cf : parse(c.bytes, k)) {
                        if (cf.number == 1) id = cf.value;
                        if (cf.number == 2) t = cf.value;
                        if (cf.number == 3) incremental = cf.value != 0;
                    }
                    if (id == 64 && incremental) s.incremental_time = t, s.has_incremental = true;
                    if (seq == 1 && id < 64) m.clock_snapshot[id] = t;
                }
            } else if (f.number == 12) {  // interned data
                for (const field& list : parse(f.bytes, k)) {
                    std::uint64_t iid = 0;
                    std::string text;
                    for (const field& e : parse(list.bytes, k)) {
                        if (e.number == 1) iid = e.value;
                        if (e.number == 2) text = std::string(e.bytes);
                    }
                    if (list.number == 2) s.names[iid] = text;
                    if (list.number == 3) s.annotation_names[iid] = text;
                    if (list.number == 29) s.values[iid] = text;
                }
            }
            if (!k) fail("malformed nested message in field " + std::to_string(f.number));
        }
        // The packet's time: incremental clock unless it names another clock.
        std::uint64_t time = ts;
        const std::uint64_t clock = ts_clock ? ts_clock : s.default_clock;
        if (has_ts && clock == 64) {
            if (!s.has_incremental) fail("incremental timestamp before its clock snapshot");
            s.incremental_time += ts;
            time = s.incremental_time;
        }
        for (const field& f : packet) {
            bool k = true;
            if (f.number == 60) {  // track descriptor
                std::uint64_t uuid = 0;
                std::string name;
                bool is_counter = false;
                for (const field& d : parse(f.bytes, k)) {
                    if (d.number == 1) uuid = d.value;
                    if (d.number == 2) name = std::string(d.bytes);
                    if (d.number == 8) is_counter = true;
                    if (d.number == 3) {
                        process_uuid = uuid;
                        for (const field& pf : parse(d.bytes, k)) {
                            if (pf.number == 1) m.pid = static_cast<std::int64_t>(pf.value);
                            if (pf.number == 6) m.process_name = std::string(pf.bytes);
                        }
                    }
                    if (d.number == 4) {
                        thread_track& t = m.threads[uuid];
                        for (const field& tf : parse(d.bytes, k)) {
                            if (tf.number == 2) t.tid = static_cast<std::int64_t>(tf.value);
                            if (tf.number == 5) t.name = std::string(tf.bytes);
                        }
                    }
                }
                if (is_counter) counter_tracks[uuid] = name;
            } else if (f.number == 11) {  // track event
                std::uint64_t type = 0, name_iid = 0, track = s.default_track;
                std::string inline_name;
                double value = 0;
                std::map<std::string, std::string> args;
                std::vector<std::uint64_t> flow_ids, terminating_flow_ids;
                for (const field& e : parse(f.bytes, k)) {
                    if (e.number == 47 && e.wire == 1) flow_ids.push_back(e.value);
                    if (e.number == 48 && e.wire == 1) terminating_flow_ids.push_back(e.value);
                    if (e.number == 9) type = e.value;
                    if (e.number == 10) name_iid = e.value;
                    if (e.number == 23) inline_name = std::string(e.bytes);
                    if (e.number == 11) track = e.value;
                    if (e.number == 44) std::memcpy(&value, &e.value, sizeof value);
                    if (e.number == 4) {
                        std::string key, val;
                        for (const field& a : parse(e.bytes, k)) {
                            if (a.number == 1) key = s.annotation_names.count(a.value) ? s.annotation_names[a.value] : "?";
                            if (a.number == 10) key = std::string(a.bytes);
                            if (a.number == 17) val = s.values.count(a.value) ? s.values[a.value] : "?";
                            if (a.number == 2) val = a.value != 0 ? "true" : "false";
                            if (a.number == 3) val = std::to_string(a.value);
                            if (a.number == 5) {
                                double d;
                                std::memcpy(&d, &a.value, sizeof d);
                                val = std::to_string(d);
                            }
                            if (a.number == 4) val = std::to_string(static_cast<std::int64_t>(a.value));
                            if (a.number == 6) val = std::string(a.bytes);
                        }
                        if (key == "?" || val == "?") fail("annotation refers to an iid not interned");
                        args[key] = val;
                    }
                }
                std::string name = inline_name;
                if (name_iid != 0) {
                    if (!s.names.count(name_iid)) fail("event name iid " + std::to_string(name_iid) + " not interned");
                    name = s.names[name_iid];
                }
                if (track == process_uuid && process_uuid != 0) {
                    m.process_instants.push_back({name, time, args, {}, {}});
                    if (args.count("count")) m.process_instant_counts[name] = std::stoull(args["count"]);
                    continue;
                }
                if (type == 4) {
                    if (!counter_tracks.count(track)) fail("counter on an undescribed track");
                    // The counter's thread: the sequence's default track.
                    m.threads[s.default_track].counters.push_back({counter_tracks[track], time, value});
                    continue;
                }
                if (!m.threads.count(track)) fail("event on a track with no thread descriptor");
                thread_track& t = m.threads[track];
                if (type == 1) {
                    s.open.push_back(t.slices.size());
                    t.slices.push_back({name, time, 0, static_cast<int>(s.open.size()) - 1, args});
                } else if (type == 2) {
                    if (s.open.empty()) {
                        fail("slice end without an open slice");
                    } else {
                        t.slices[s.open.back()].end = time;
                        s.open.pop_back();
                    }
                } else if (type == 3) {
                    t.instants.push_back({name, time, args, flow_ids, terminating_flow_ids});
                } else {
                    fail("unexpected track event type " + std::to_string(type));
                }
            }
            if (!k) fail("malformed nested message in field " + std::to_string(f.number));
        }
    }
    if (!ok) fail("malformed trace");
    for (auto& [id, s] : sequences) {
        if (!s.open.empty()) fail("sequence " + std::to_string(id) + " ends with open slices");
    }
    return m;
}

}  // namespace loupe_test::perfetto
