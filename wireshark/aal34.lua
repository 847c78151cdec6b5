-- aal34.lua: Wireshark/tshark dissector for atmlab's AAL3/4 cell captures.
--
--   tshark -X lua_script:aal34.lua -r cells.pcapng
--   wireshark -X lua_script:aal34.lua cells.pcapng   (or copy it to ~/.local/lib/wireshark/plugins/)
--
-- `atmlab capture` writes an AAL3/4 link as ERF cell records (type 3: the
-- cell's 4 header octets and 48 payload octets) in a pcapng file whose
-- interface description starts "atmlab aal34". For those cells this script
-- decodes the SAR-PDU (segment type, sequence number, MID, length
-- indicator, CRC-10 checked), reassembles each message per direction,
-- VPI/VCI and MID, decodes its CPCS-PDU (CPI, Btag, BASize, pad, AL, Etag,
-- Length, each checked) and hands the SDU to LLC/SNAP or, on a VC-mux link,
-- to IP. Every other record goes to Wireshark's own ERF dissector.
-- `atmlab capture --lua-dissector PATH` writes this file out.

local p = Proto("aal34", "ATM AAL3/4 (atmlab)")

local st_names = { [0] = "COM", [1] = "EOM", [2] = "BOM", [3] = "SSM" }
local f = {
    st     = ProtoField.uint8("aal34.st", "Segment type", base.DEC, st_names),
    sn     = ProtoField.uint8("aal34.sn", "Sequence number", base.DEC),
    mid    = ProtoField.uint16("aal34.mid", "MID", base.DEC),
    li     = ProtoField.uint8("aal34.li", "Length indicator", base.DEC),
    crc    = ProtoField.uint16("aal34.crc10", "CRC-10", base.HEX),
    crc_ok = ProtoField.bool("aal34.crc10.good", "CRC-10 correct"),
    cpi    = ProtoField.uint8("aal34.cpcs.cpi", "CPI", base.DEC),
    btag   = ProtoField.uint8("aal34.cpcs.btag", "Btag", base.HEX),
    basize = ProtoField.uint16("aal34.cpcs.basize", "BASize", base.DEC),
    pad    = ProtoField.bytes("aal34.cpcs.pad", "Pad"),
    al     = ProtoField.uint8("aal34.cpcs.al", "AL", base.DEC),
    etag   = ProtoField.uint8("aal34.cpcs.etag", "Etag", base.HEX),
    len    = ProtoField.uint16("aal34.cpcs.length", "Length", base.DEC),
    cells  = ProtoField.uint16("aal34.cells", "Cells", base.DEC),
}
p.fields = f

local ef = {
    crc    = ProtoExpert.new("aal34.crc10.bad", "AAL3/4 CRC-10 incorrect: the cell is discarded", expert.group.CHECKSUM, expert.severity.ERROR),
    seq    = ProtoExpert.new("aal34.sequence", "AAL3/4 sequence gap: the message in progress is lost", expert.group.SEQUENCE, expert.severity.WARN),
    cpcs   = ProtoExpert.new("aal34.cpcs.bad", "AAL3/4 CPCS fields disagree: the message is discarded", expert.group.MALFORMED, expert.severity.ERROR),
}
p.experts = { ef.crc, ef.seq, ef.cpcs }

local erf_type = Field.new("erf.types.type")
local erf_cap = Field.new("erf.flags.cap")
local if_desc = Field.new("frame.interface_description")
local erf = Dissector.get("erf")
local llc = Dissector.get("llc")
local ip = Dissector.get("ip")

-- CRC-10 (x^10 + x^9 + x^5 + x^4 + x + 1) over the 48-octet SAR-PDU with
-- its CRC field: the remainder is 0 when the cell is intact.
local function crc10_remainder(tvb, off)
    local r = 0
    for i = 0, 47 do
        local b = tvb(off + i, 1):uint()
        for bit = 7, 0, -1 do
            r = r * 2 + math.floor(b / 2 ^ bit) % 2
            if r >= 0x400 then r = bit32 and bit32.bxor(r, 0x633) or bit.bxor(r, 0x633) end
        end
    end
    return r
end

local pending = {}  -- message in progress by direction/VPI/VCI/MID: {bytes, next sn, cells}
local done = {}     -- frame number -> reassembled CPCS-PDU (ByteArray) and its cell count

local function is_aal34()
    local d = if_desc()
    return d ~= nil and tostring(d.value):find("^atmlab aal34") ~= nil
end

local function vcmux()
    return tostring(if_desc().value):find(" vcmux") ~= nil
end

-- cpcs decodes a reassembled CPCS-PDU and hands its SDU on.
local function cpcs(pdu, ncells, pinfo, root)
    local tvb = pdu:tvb("Reassembled AAL3/4 CPCS-PDU")
    local n = tvb:len()
    local t = root:add(p, tvb(), "AAL3/4 CPCS-PDU")
    t:add(f.cells, ncells):set_generated()
    if n < 8 then
        t:add_proto_expert_info(ef.cpcs, "CPCS-PDU shorter than its header and trailer")
        return
    end
    local length = tvb(n - 2, 2):uint()
    t:add(f.cpi, tvb(0, 1))
    t:add(f.btag, tvb(1, 1))
    t:add(f.basize, tvb(2, 2))
    local padlen = n - 8 - length
    if padlen < 0 or padlen > 3 or tvb(1, 1):uint() ~= tvb(n - 3, 1):uint() or tvb(2, 2):uint() ~= length then
        t:add_proto_expert_info(ef.cpcs, "Btag/Etag, BASize or Length do not match the PDU")
        t:add(f.al, tvb(n - 4, 1))
        t:add(f.etag, tvb(n - 3, 1))
        t:add(f.len, tvb(n - 2, 2))
        return
    end
    if padlen > 0 then t:add(f.pad, tvb(4 + length, padlen)) end
    t:add(f.al, tvb(n - 4, 1))
    t:add(f.etag, tvb(n - 3, 1))
    t:add(f.len, tvb(n - 2, 2))
    local sdu = tvb(4, length):tvb()
    if not vcmux() and length >= 3 and sdu(0, 3):uint() == 0xAAAA03 then
        llc:call(sdu, pinfo, root)
    else
        ip:call(sdu, pinfo, root)
    end
end

-- sar decodes one cell's SAR-PDU at off and, on the first pass, feeds the
-- reassembly.
local function sar(tvb, off, key, pinfo, root)
    local w = tvb(off, 2):uint()
    local st, sn, mid = math.floor(w / 16384), math.floor(w / 1024) % 16, w % 1024
    local tr = tvb(off + 46, 2):uint()
    local li = math.floor(tr / 1024)
    local t = root:add(p, tvb(off, 48), string.format("AAL3/4 SAR-PDU, %s, SN %d, MID %d, LI %d", st_names[st], sn, mid, li))
    t:add(f.st, tvb(off, 1), st)
    t:add(f.sn, tvb(off, 2), sn)
    t:add(f.mid, tvb(off, 2), mid)
    t:add(f.li, tvb(off + 46, 1), li)
    t:add(f.crc, tvb(off + 46, 2), tr % 1024)
    local good = crc10_remainder(tvb, off) == 0
    t:add(f.crc_ok, good):set_generated()
    pinfo.cols.protocol = "AAL3/4"
    pinfo.cols.info = string.format("%s SN %d MID %d LI %d", st_names[st], sn, mid, li)
    if not good then
        t:add_proto_expert_info(ef.crc)
        pinfo.cols.info:append(" [CRC-10 incorrect]")
        return
    end
    key = key .. "/" .. mid
    if not pinfo.visited then
        local m = pending[key]
        local data = tvb(off + 2, math.min(li, 44)):bytes()
        if st == 2 or st == 3 then                     -- BOM or SSM: a new message
            m = { ba = ByteArray.new(), sn = sn, cells = 0 }
        elseif m == nil or sn ~= m.sn then             -- COM/EOM without its start, or out of sequence
            if m ~= nil then done[pinfo.number] = "gap" end
            m = nil
        end
        if m == nil then
            pending[key] = nil
        else
            m.ba:append(data)
            m.sn, m.cells = (sn + 1) % 16, m.cells + 1
            if st == 1 or st == 3 then                 -- EOM or SSM: the message is whole
                pending[key] = nil
                done[pinfo.number] = { ba = m.ba, cells = m.cells }
            else
                pending[key] = m
            end
        end
    end
    local d = done[pinfo.number]
    if d == "gap" then
        t:add_proto_expert_info(ef.seq)
        pinfo.cols.info:append(" [sequence gap]")
    elseif d ~= nil then
        cpcs(d.ba, d.cells, pinfo, root)
    end
end

function p.dissector(tvb, pinfo, tree)
    erf:call(tvb, pinfo, tree)
    local ty = erf_type()
    if not ty or ty.value ~= 3 or tvb:len() < 52 or not is_aal34() then
        return
    end
    local h = tvb(0, 4):uint()
    local vpi, vci = math.floor(h / 2 ^ 20) % 256, math.floor(h / 16) % 65536
    local cap = erf_cap()
    sar(tvb, 4, string.format("%d/%d/%d", cap and cap.value or 0, vpi, vci), pinfo, tree)
end

function p.init()
    pending, done = {}, {}
end

DissectorTable.get("wtap_encap"):add(wtap_encaps.ERF, p)
