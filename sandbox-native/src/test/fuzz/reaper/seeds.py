#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_reaper into the directory given: the first byte is the slice size the HTTP reader
is fed in (0: all at once), the rest a Docker daemon's answer to the listing. The kept corpus (corpus/) began as
these seeds and grew by `make fuzz` and `make fuzz-merge`."""
import os
import sys

ID = "a" * 64
LIST = ('[{"Id":"' + ID + '","Names":["/s1"],"Created":1700000000,"Ports":[],"Labels":{"dev.sandbox.session":"s-1",'
        '"dev.sandbox.expires-at":"1700000600","dev.sandbox.lease-seconds":"30","other":"x\\"y\\\\z\\/"},'
        '"State":"running","NetworkSettings":{"Networks":{"none":{"IPAMConfig":null,"Ratio":-1.5e-3,"Ok":true,'
        '"No":false}}}},{"Id":"' + "0123456789abcdef" * 4 + '","Created":1700000001,"State":"exited","Labels":'
        '{"dev.sandbox.session":"\\u0073\\u002D2","note":"caf\\u00e9 \\ud83d\\ude00"}},{"Id":"' + "b" * 64 +
        '","State":"created","Created":1,"Labels":{"dev.sandbox.session":"s3","dev.sandbox.expires-at":"never"}}]')


def length(body, step=0):
    return bytes([step]) + (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                            + body).encode()


def chunked(body, step=0):
    parts = [body[i:i + 50] for i in range(0, len(body), 50)]
    text = "".join(f"{len(p):x}\r\n{p}\r\n" for p in parts) + "0\r\nX-Trailer: 1\r\n\r\n"
    return bytes([step]) + ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + text).encode()


SEEDS = {
    "length": length(LIST),
    "length-bytewise": length(LIST, 1),
    "chunked": chunked(LIST),
    "chunked-sliced": chunked(LIST, 7),
    "until-eof": b"\x00HTTP/1.0 200 OK\r\n\r\n" + LIST.encode(),
    "empty-list": length("[]"),
    "error-status": length('{"message":"no"}').replace(b"200 OK", b"500 Server Error"),
    "no-content": b"\x00HTTP/1.1 204 No Content\r\n\r\n",
}

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
