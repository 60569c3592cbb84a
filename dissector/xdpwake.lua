-- SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
--
-- Wireshark dissector for the xdpwake wire format (include/xdpwake/proto.h):
-- one 64-byte header after Ethernet (EtherType 0x88B5 by default) or after
-- IPv4/UDP (port 49152 by default), then the payload.
--
--   tshark -X lua_script:dissector/xdpwake.lua -r capture.pcap -V
--   wireshark -X lua_script:/usr/local/share/xdpwake/xdpwake.lua
--
-- Other EtherTypes / ports: Preferences > Protocols > XDPWAKE, or
--   -o xdpwake.ethertype:0x9000 -o xdpwake.udp_port:7777

local p = Proto("xdpwake", "xdpwake message passing")

local types = {
	[1] = "SMALL", [2] = "MEDIUM", [3] = "RNDV", [4] = "PULL", [5] = "PULL_REPLY",
	[6] = "NOTIFY", [7] = "ACK", [8] = "CONNECT", [9] = "CONNECT_REPLY", [10] = "CLOSE",
	[11] = "PROBE", [12] = "PROBE_REPLY",
}

local f = p.fields
f.version = ProtoField.uint8("xdpwake.version", "Version", base.DEC)
f.type = ProtoField.uint8("xdpwake.type", "Type", base.DEC, types)
f.flags = ProtoField.uint8("xdpwake.flags", "Flags", base.HEX)
f.lat = ProtoField.bool("xdpwake.flags.lat", "LAT (latency-sensitive)", 8, nil, 0x01)
f.more = ProtoField.bool("xdpwake.flags.more", "MORE (more frames queued)", 8, nil, 0x02)
f.last = ProtoField.bool("xdpwake.flags.last", "LAST (last fragment)", 8, nil, 0x04)
f.dataf = ProtoField.bool("xdpwake.flags.data", "DATA (message carries 32 bits of data)", 8, nil, 0x08)
f.gone = ProtoField.bool("xdpwake.flags.gone", "GONE (PROBE_REPLY: the endpoint is closed or its process died)", 8, nil, 0x40)
f.data = ProtoField.uint32("xdpwake.data", "Message data", base.HEX)
f.dst_ep = ProtoField.uint16("xdpwake.dst_ep", "Destination endpoint", base.DEC)
f.src_ep = ProtoField.uint16("xdpwake.src_ep", "Source endpoint", base.DEC)
f.session = ProtoField.uint32("xdpwake.session", "Session", base.HEX)
f.seq = ProtoField.uint32("xdpwake.seq", "Sequence", base.DEC)
f.ack = ProtoField.uint32("xdpwake.ack", "Cumulative ack", base.DEC)
f.msg_id = ProtoField.uint32("xdpwake.msg_id", "Message id", base.DEC)
f.msg_len = ProtoField.uint32("xdpwake.msg_len", "Message length", base.DEC)
f.frag_off = ProtoField.uint32("xdpwake.frag_off", "Fragment offset", base.DEC)
f.frag_idx = ProtoField.uint32("xdpwake.frag_idx", "Fragment index", base.DEC)
f.frag_count = ProtoField.uint32("xdpwake.frag_count", "Fragment count", base.DEC)
f.payload_len = ProtoField.uint16("xdpwake.payload_len", "Payload length", base.DEC)
f.csum = ProtoField.uint32("xdpwake.csum", "CRC32C", base.HEX)
f.match = ProtoField.uint64("xdpwake.match", "Match", base.HEX)
f.eid = ProtoField.uint32("xdpwake.eid", "Endpoint incarnation", base.HEX)
f.resume = ProtoField.uint32("xdpwake.resume", "Message stream resumes at", base.DEC)
f.finals = ProtoField.uint32("xdpwake.finals", "Final ids after it (bit i: resume + 1 + i)", base.HEX)
f.dst_nonce = ProtoField.uint64("xdpwake.dst_nonce", "Destination incarnation nonce (0: unknown)", base.HEX)
f.src_nonce = ProtoField.uint64("xdpwake.src_nonce", "Source incarnation nonce", base.HEX)
f.sack = ProtoField.uint64("xdpwake.sack", "Held out of order (bit i: ack + 1 + i)", base.HEX)
f.sack_ext = ProtoField.uint64("xdpwake.sack_ext",
	"Held out of order, further (word w bit i: ack + 1 + 64 (w + 1) + i)", base.HEX)
f.pull_block = ProtoField.uint32("xdpwake.pull.block_id", "Pull block id", base.DEC)
f.pull_nfrags = ProtoField.uint32("xdpwake.pull.nfrags", "Pull fragments", base.DEC)
f.payload = ProtoField.bytes("xdpwake.payload", "Payload")

local e_short = ProtoExpert.new("xdpwake.short", "Frame shorter than the xdpwake header",
				expert.group.MALFORMED, expert.severity.ERROR)
local e_len = ProtoExpert.new("xdpwake.badlen", "payload_len beyond the frame",
			      expert.group.MALFORMED, expert.severity.ERROR)
p.experts = { e_short, e_len }

p.prefs.ethertype = Pref.uint("EtherType", 0x88B5, "EtherType of Ethernet encapsulation")
p.prefs.udp_port = Pref.uint("UDP port", 49152, "UDP port of UDP encapsulation")

local HDR_LEN = 64

function p.dissector(buf, pinfo, tree)
	local len = buf:len()
	pinfo.cols.protocol = "XDPWAKE"
	local t = tree:add(p, buf(0, math.min(len, HDR_LEN)))
	if len < HDR_LEN then
		t:add_proto_expert_info(e_short)
		return 0
	end
	local ty = buf(1, 1):uint()
	local flags = buf(2, 1):uint()
	t:add(f.version, buf(0, 1))
	t:add(f.type, buf(1, 1))
	local ft = t:add(f.flags, buf(2, 1))
	ft:add(f.lat, buf(2, 1))
	ft:add(f.more, buf(2, 1))
	ft:add(f.last, buf(2, 1))
	ft:add(f.dataf, buf(2, 1))
	if ty == 12 then
		ft:add(f.gone, buf(2, 1))
	end
	if bit.band(flags, 8) ~= 0 then
		t:add(f.data, buf(56, 4))
	end
	t:add(f.dst_ep, buf(4, 2))
	t:add(f.src_ep, buf(6, 2))
	t:add(f.session, buf(8, 4))
	t:add(f.seq, buf(12, 4))
	t:add(f.ack, buf(16, 4))
	t:add(f.msg_id, buf(20, 4))
	t:add(f.msg_len, buf(24, 4))
	t:add(f.frag_off, buf(28, 4))
	t:add(f.frag_idx, buf(32, 4))
	t:add(f.frag_count, buf(36, 4))
	t:add(f.payload_len, buf(40, 2))
	t:add(f.csum, buf(44, 4))
	local fm = t:add(f.match, buf(48, 8))
	if ty == 8 or ty == 9 then
		-- CONNECT, CONNECT_REPLY: match = endpoint incarnation, resume id
		fm:add(f.eid, buf(48, 4))
		fm:add(f.resume, buf(52, 4))
		fm:add(f.finals, buf(24, 4))
	elseif ty == 7 then
		-- ACK: selective acks
		fm:add(f.sack, buf(48, 8))
	end
	if ty == 8 or ty == 9 or ty == 10 then
		-- CONNECT, CONNECT_REPLY, CLOSE: the incarnation nonces
		t:add(f.dst_nonce, buf(28, 8))
		t:add(f.src_nonce, buf(56, 8))
	end

	local plen = buf(40, 2):uint()
	if HDR_LEN + plen > len then
		t:add_proto_expert_info(e_len)
		plen = len - HDR_LEN
	end
	if ty == 4 and plen >= 8 then
		t:add(f.pull_block, buf(HDR_LEN, 4))
		t:add(f.pull_nfrags, buf(HDR_LEN + 4, 4))
	elseif ty == 7 and plen > 0 and plen % 8 == 0 then
		-- ACK: the selective acks' further words
		for w = 0, plen / 8 - 1 do
			t:add(f.sack_ext, buf(HDR_LEN + 8 * w, 8))
		end
	elseif plen > 0 then
		t:add(f.payload, buf(HDR_LEN, plen))
	end

	local fl = {}
	if bit.band(flags, 1) ~= 0 then fl[#fl + 1] = "LAT" end
	if bit.band(flags, 2) ~= 0 then fl[#fl + 1] = "MORE" end
	if bit.band(flags, 4) ~= 0 then fl[#fl + 1] = "LAST" end
	if bit.band(flags, 8) ~= 0 then fl[#fl + 1] = "DATA" end
	if ty == 12 and bit.band(flags, 0x40) ~= 0 then fl[#fl + 1] = "GONE" end
	pinfo.cols.info = string.format("%s %u->%u msg %u frag %u/%u len %u%s",
		types[ty] or ("type " .. ty), buf(6, 2):uint(), buf(4, 2):uint(),
		buf(20, 4):uint(), buf(32, 4):uint(), buf(36, 4):uint(), plen,
		#fl > 0 and (" [" .. table.concat(fl, ",") .. "]") or "")
	t:append_text(string.format(", %s", types[ty] or ("type " .. ty)))
	return HDR_LEN + plen
end

local registered_et, registered_port
local function register()
	local et = DissectorTable.get("ethertype")
	local udp = DissectorTable.get("udp.port")
	if registered_et then et:remove(registered_et, p) end
	if registered_port then udp:remove(registered_port, p) end
	registered_et = p.prefs.ethertype
	registered_port = p.prefs.udp_port
	et:add(registered_et, p)
	udp:add(registered_port, p)
end

function p.prefs_changed()
	register()
end

register()
