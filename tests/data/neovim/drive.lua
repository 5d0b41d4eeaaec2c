-- Drives Neovim (headless) through hloidx's language server as a user would, after the
-- README's init.lua has run: open the file, wait for the client to attach and publish
-- diagnostics, then ask for a hover, a definition and the inlay hints at the positions the
-- test passes in HLOIDX_NVIM_QUERY (JSON), and write what came back to HLOIDX_NVIM_OUT (JSON).
-- Every wait is bounded; a step that times out is recorded, never hangs the editor.
local query = vim.json.decode(os.getenv("HLOIDX_NVIM_QUERY"))
local out_path = os.getenv("HLOIDX_NVIM_OUT")
local limit = tonumber(os.getenv("HLOIDX_NVIM_WAIT_MS") or "60000")
local result = { steps = {} }

local function finish()
  local file = io.open(out_path, "w")
  file:write(vim.json.encode(result))
  file:close()
  vim.cmd("qa!")
end

local function step(name, ok)
  table.insert(result.steps, { name = name, ok = ok })
  if not ok then
    result.failed = name
    error("timed out or no answer: " .. name, 0)
  end
end

local ok_run, err = pcall(function()
  vim.cmd.edit(vim.fn.fnameescape(query.file))
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype

  local client
  step("attach", vim.wait(limit, function()
    client = vim.lsp.get_clients({ bufnr = buf, name = "hloidx" })[1]
    return client ~= nil and client.initialized
  end, 50))
  result.client_name = client.name

  step("diagnostics", vim.wait(limit, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50))
  result.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, end_col = d.end_col,
      severity = d.severity, message = d.message })
  end

  local function at(position)
    return {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = position[1], character = position[2] },
    }
  end

  local hover = vim.lsp.buf_request_sync(buf, "textDocument/hover", at(query.hover), limit)
  local answer = hover and hover[client.id] and hover[client.id].result
  step("hover", answer ~= nil)
  result.hover = answer.contents.value

  local found = vim.lsp.buf_request_sync(buf, "textDocument/definition", at(query.definition), limit)
  local locations = found and found[client.id] and found[client.id].result
  step("definition", locations ~= nil and #locations > 0)
  result.definition = locations

  -- the hints the editor itself fetched (the README's vim.lsp.inlay_hint.enable(true)): they
  -- come once the server has analysed the file and asked the client to refresh
  local hints = {}
  step("inlay hints", vim.wait(limit, function()
    hints = vim.lsp.inlay_hint.get({ bufnr = buf })
    return #hints >= query.hints
  end, 100))
  result.hints = {}
  for _, h in ipairs(hints) do
    local label = h.inlay_hint.label
    if type(label) == "table" then
      local parts = {}
      for _, part in ipairs(label) do table.insert(parts, part.value) end
      label = table.concat(parts)
    end
    table.insert(result.hints, { line = h.inlay_hint.position.line,
      character = h.inlay_hint.position.character, label = label })
  end
end)
if not ok_run then
  result.error = tostring(err)
end
finish()
