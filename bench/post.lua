-- One chat completion per request; the key and extra headers come from the environment.
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_KEY") or "none")
local host = os.getenv("BENCH_CUSTOM_HOST")
if host then
  wrk.headers["x-portkey-provider"] = "openai"
  wrk.headers["x-portkey-custom-host"] = host
end
