"""Real-browser side of the nativemsg workload: headless Chromium, the lab's extension, the
DevTools protocol over a pipe, host registration and host-side /proc readings.

Standard library only: driver.py runs under the lab's interpreter with -E -S (no site-packages).
"""
