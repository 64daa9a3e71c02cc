"""The Lua libraries Redis exposes to scripts (cjson, cmsgpack, struct, bit),
checked through EVAL against replies recorded from redis-server 7.0.15
(the cases were verified there by the engineer who wrote the libraries).
Each case is a script run with no keys and its expected reply: a string,
integer or array, or {"error": text} for an error reply."""
import json

import pytest
import redis

CASES = [json.loads(line) for line in r"""
{"script": "return cjson.encode({1,2,3})", "reply": "[1,2,3]"}
{"script": "return cjson.encode({a={b={1,'x'}}})", "reply": "{\"a\":{\"b\":[1,\"x\"]}}"}
{"script": "return cjson.encode('a/b\"c\\n')", "reply": "\"a\\/b\\\"c\\n\""}
{"script": "return cjson.encode({1/3, 1e15, -0.5, 100})", "reply": "[0.33333333333333,1e+15,-0.5,100]"}
{"script": "return cjson.encode({})", "reply": "{}"}
{"script": "return cjson.encode({1, nil, 3})", "reply": "[1,null,3]"}
{"script": "return cjson.encode({[11]=1})", "reply": {"error": "ERR user_script:1: Cannot serialise table: excessively sparse array script: 2e08a70888b26974782620baf62c758392a37b7b, on @user_script:1."}}
{"script": "return cjson.encode({[true]=1})", "reply": {"error": "ERR user_script:1: Cannot serialise boolean: table key must be a number or string script: 376a640005c8509c694166527ca834359bf69aa8, on @user_script:1."}}
{"script": "return cjson.encode(function() end)", "reply": {"error": "ERR user_script:1: Cannot serialise function: type not supported script: c6600573aa08cdf0af5da6e0ef682db69a3acc00, on @user_script:1."}}
{"script": "return cjson.encode(1/0)", "reply": {"error": "ERR user_script:1: Cannot serialise number: must not be NaN or Inf script: 08ffdaa5e7f117332da21c3b5222c2ede9492c60, on @user_script:1."}}
{"script": "return cjson.decode('[1,\"two\",{\"three\":3}]')", "reply": [1, "two", []]}
{"script": "return cjson.decode('{\"a\":[1,2,3]}').a[3]", "reply": 3}
{"script": "return cjson.decode('\"\\\\u00e9\\\\ud83d\\\\ude00\"')", "reply": "é😀"}
{"script": "return cjson.decode('[1,2')", "reply": {"error": "ERR user_script:1: Expected comma or array end but found T_END at character 5 script: c107001b5ba2ff860ee2557f64da37c4767ef4bd, on @user_script:1."}}
{"script": "return cjson.decode('')", "reply": {"error": "ERR user_script:1: Expected value but found T_END at character 1 script: 7ff8cf86abed928f4d61a01dcc9713f0117b180a, on @user_script:1."}}
{"script": "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))", "reply": {"error": "ERR user_script:1: Found too many nested data structures (1001) at character 1001 script: 16688796523d8f6cf1ef0ab4577ccee2204836fc, on @user_script:1."}}
{"script": "return tostring(cjson.decode('null') == cjson.null)", "reply": "true"}
{"script": "return cjson.encode(cjson.decode('[null,true,false,0.5]'))", "reply": "[null,true,false,0.5]"}
{"script": "local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end return cjson.encode(t)", "reply": {"error": "ERR user_script:1: Cannot serialise, excessive nesting (1001) script: 3e058141c7812f5acf06d8733fd6b9e690c0dbe9, on @user_script:1."}}
{"script": "return {cjson.encode_max_depth(), cjson.decode_max_depth(), cjson.encode_number_precision()}", "reply": [1000, 1000, 14]}
{"script": "local c = cjson.new() c.encode_number_precision(3) return c.encode(math.pi)", "reply": "3.14"}
{"script": "return (cmsgpack.pack({1,2,3}):gsub('.', function(c) return string.format('%02x', c:byte()) end))", "reply": "93010203"}
{"script": "return (cmsgpack.pack(0, 127, 128, 255, 256, 65535, 65536, 2^32, -1, -32, -33, -128, -129, -32769, -2^31-1):gsub('.', function(c) return string.format('%02x', c:byte()) end))", "reply": "007fcc80ccffcd0100cdffffce00010000cf0000000100000000ffe0d0dfd080d1ff7fd2ffff7fffd3ffffffff7fffffff"}
{"script": "return (cmsgpack.pack(0.5, 0.1, {a=1}, 'hi', true, false, nil):gsub('.', function(c) return string.format('%02x', c:byte()) end))", "reply": "ca3f000000cb3fb999999999999a81a16101a26869c3c2c0"}
{"script": "return cmsgpack.unpack(cmsgpack.pack({1,2,'three'}))", "reply": [1, 2, "three"]}
{"script": "return {cmsgpack.unpack_one(cmsgpack.pack(10, 20, 30), 1)}", "reply": [2, 20]}
{"script": "return {cmsgpack.unpack_limit(cmsgpack.pack(10, 20, 30), 2)}", "reply": [2, 10, 20]}
{"script": "return {cmsgpack.unpack_limit(cmsgpack.pack(10, 20, 30), 5, 1)}", "reply": [-1, 20, 30]}
{"script": "return cmsgpack.unpack('\\204')", "reply": {"error": "ERR user_script:1: Missing bytes in input. script: 332e907abffc8f6c8c9aa7fa8c8f82745d942bf9, on @user_script:1."}}
{"script": "return cmsgpack.unpack('\\193')", "reply": {"error": "ERR user_script:1: Bad data format in input. script: dc135bd7bc2955014f03280e151acf74360378e7, on @user_script:1."}}
{"script": "return cmsgpack.pack()", "reply": {"error": "ERR user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.) script: 6bc235afa55de88253e203cc5fe5844792e25209, on @user_script:1."}}
{"script": "return (struct.pack('>I2<i4', 258, -2):gsub('.', function(c) return string.format('%02x', c:byte()) end))", "reply": "0102feffffff"}
{"script": "return {struct.unpack('>hBs', '\\255\\254\\7abc\\0')}", "reply": [-2, 7, "abc", 8]}
{"script": "return {struct.unpack('bc0', '\\3abcdef')}", "reply": ["abc", 5]}
{"script": "return {struct.size('!4 b i d'), struct.size('c10'), struct.size('i7')}", "reply": [16, 10, 7]}
{"script": "return struct.unpack('i', 'abc')", "reply": {"error": "ERR user_script:1: bad argument #2 to 'unpack' (data string too short) script: ec303136177146d52efe90f9a6ccc1accdbe9e9d, on @user_script:1."}}
{"script": "return struct.pack('i40', 1)", "reply": {"error": "ERR user_script:1: integral size 40 is larger than limit of 32 script: 652cabace7a9fdbd8e0c2489b1b804d19185ddc8, on @user_script:1."}}
{"script": "return struct.pack('z', 1)", "reply": {"error": "ERR user_script:1: bad argument #1 to 'pack' (invalid format option 'z') script: b1a49a62278d772f47cfca6a679bc33c0fa64430, on @user_script:1."}}
{"script": "return {bit.band(0xff, 0x0f), bit.bor(1, 2, 4), bit.bxor(5, 3), bit.bnot(0)}", "reply": [15, 7, 6, -1]}
{"script": "return {bit.lshift(1, 31), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.rol(1, 33), bit.ror(1, 1)}", "reply": [-2147483648, 15, -16, 2, -2147483648]}
{"script": "return {bit.tohex(255), bit.tohex(-1, 4), bit.tohex(255, -2), bit.tohex(65535, -2147483648)}", "reply": ["000000ff", "ffff", "FF", "0000FFFF"]}
{"script": "return {bit.tobit(2^32 + 5), bit.tobit(2^31), bit.bswap(0x12345678)}", "reply": [5, -2147483648, 2018915346]}
{"script": "return bit.band('x')", "reply": {"error": "ERR user_script:1: bad argument #1 to 'band' (number expected, got string) script: d35c9a1d4f4825ae2c0656c3cb8c9f397ca6d9b1, on @user_script:1."}}
{"script": "return cjson.encode({[1]=1, [2]=2, [4]=4})", "reply": "[1,2,null,4]"}
{"script": "return cmsgpack.unpack(cmsgpack.pack(2^53))", "reply": 9007199254740992}
{"script": "return tostring(cmsgpack.unpack(cmsgpack.pack(0.1)))", "reply": "0.1"}
""".strip().splitlines()]


def _expect_error(text):
    # redis-py drops the "ERR " prefix of error replies
    return text[4:] if text.startswith("ERR ") else text


@pytest.mark.parametrize("case", CASES, ids=[c["script"][:60] for c in CASES])
def test_lua_library_case(r, case):
    want = case["reply"]
    if isinstance(want, dict) and "error" in want:
        with pytest.raises(redis.ResponseError) as e:
            r.eval(case["script"], 0)
        assert str(e.value) == _expect_error(want["error"])
    else:
        assert r.eval(case["script"], 0) == want


def test_libraries_are_protected(r):
    for lib, fn in (("cjson", "encode"), ("cmsgpack", "pack"), ("bit", "lshift"), ("struct", "pack")):
        with pytest.raises(redis.ResponseError) as e:
            r.eval("%s.%s = function() return 1 end" % (lib, fn), 0)
        assert "Attempt to modify a readonly table" in str(e.value)
