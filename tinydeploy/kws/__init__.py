"""The keyword-spotting application on the device and around it: the kws app's generated
headers and build (``device``), streaming audio to it and simulating it on the host
(``stream``: the detector too), the real-time check (``realtime``), label files (``labels``:
the committed model's labels too), WAV files and clips (``wav``) and scoring a folder of WAVs
(``folder``). Built on the audio front ends of `tinydeploy.frontend`; training lives in
`tinydeploy.train`, above this package."""
