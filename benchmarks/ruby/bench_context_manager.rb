# frozen_string_literal: true

# The Ruby original's compress_tool_results on the input benchmarks/bench_engine_ruby.py writes.
#
#   ruby benchmarks/ruby/bench_context_manager.rb CONTEXT_MANAGER_RB MESSAGES_JSON [REPEAT]
#
# CONTEXT_MANAGER_RB: lib/swarm_sdk/agent/context_manager.rb from github.com/parruda/swarm.
# RubyLLM is reduced to a plain value object (what the class reads of a message: role,
# content, tool_call_id), as the parity cases in /work/shared/reference were run. Prints
# the best CPU and wall seconds of REPEAT runs (default 3), each on a new ContextManager.
require "json"

module RubyLLM
  class Message
    attr_reader :role, :content, :tool_call_id, :tool_calls

    def initialize(role:, content: nil, tool_call_id: nil, tool_calls: nil)
      @role = role
      @content = content
      @tool_call_id = tool_call_id
      @tool_calls = tool_calls
    end
  end
end

source, input, repeat = ARGV
abort("usage: #{$PROGRAM_NAME} CONTEXT_MANAGER_RB MESSAGES_JSON [REPEAT]") unless source && input
require File.expand_path(source)

messages = JSON.parse(File.read(input)).map do |m|
  RubyLLM::Message.new(role: m["role"].to_sym, content: m["content"], tool_call_id: m["tool_call_id"])
end

best_cpu = best_wall = Float::INFINITY
compressed = 0
(repeat || 3).to_i.times do
  GC.start
  manager = SwarmSDK::Agent::ContextManager.new
  c0 = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  w0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  out = manager.compress_tool_results(messages, keep_recent: 10)
  best_cpu = [best_cpu, Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - c0].min
  best_wall = [best_wall, Process.clock_gettime(Process::CLOCK_MONOTONIC) - w0].min
  compressed = out.each_with_index.count { |m, i| !m.equal?(messages[i]) }
end
puts JSON.generate({ "messages" => messages.size, "compressed" => compressed, "cpu" => best_cpu, "wall" => best_wall })
