"""The local runner (`make run`): template.yaml served on loopback with moto and the chat-platform sandbox."""
