"""Host side of the serial protocol (docs/protocol.md): COBS framing, CRC-16, typed
messages and a stop-and-wait `Session` over a pyserial port."""

from tinydeploy.link.frame import BadFrame, Frame, FrameDecoder, FrameFault, encode_frame
from tinydeploy.link.messages import ErrorCode, LogLevel, MsgType, decode_message
from tinydeploy.link.session import DeviceInfo, InvokeResult, Session, open_port

__all__ = ["BadFrame", "DeviceInfo", "ErrorCode", "Frame", "FrameDecoder", "FrameFault",
           "InvokeResult", "LogLevel", "MsgType", "Session", "decode_message", "encode_frame",
           "open_port"]
