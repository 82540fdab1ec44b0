"""The fictional Rails repository ("shop-api") the generated sessions work on.

make_session.py reads, greps and globs these files, so every tool result in a
generated session is a real slice of a real (if invented) file. Fixed text:
changing it changes every sample (regenerate them with --samples).
"""

from __future__ import annotations

ROOT = "/home/dev/shop-api"

REQUEST_THROTTLE = '''\
# frozen_string_literal: true

# Rack middleware that throttles API requests before they reach Rails.
#
# Every request under /api is counted in a fixed one-minute window in Redis.
# When a client goes over the limit it gets a 429 with a Retry-After header
# and the request never reaches a controller.
class RequestThrottle
  DEFAULT_LIMIT = 300
  WINDOW = 60
  THROTTLED_PATHS = %r{\\A/api/}

  def initialize(app, limiter: nil, limit: DEFAULT_LIMIT, logger: Rails.logger)
    @app = app
    @limiter = limiter || RateLimiter.new(limit: limit, window: WINDOW)
    @logger = logger
  end

  def call(env)
    request = ActionDispatch::Request.new(env)
    return @app.call(env) unless throttled_path?(request)

    key = throttle_key(request)
    if @limiter.allow?(key)
      status, headers, body = @app.call(env)
      [status, headers.merge(rate_limit_headers(key)), body]
    else
      too_many_requests(key)
    end
  end

  private

  def throttled_path?(request)
    THROTTLED_PATHS.match?(request.path)
  end

  # One bucket per client address. Clients behind the same NAT share it.
  def throttle_key(request)
    "ip:#{request.remote_ip}"
  end

  def rate_limit_headers(key)
    {
      "X-RateLimit-Limit" => @limiter.limit.to_s,
      "X-RateLimit-Remaining" => @limiter.remaining(key).to_s
    }
  end

  def too_many_requests(key)
    retry_after = @limiter.retry_after(key)
    @logger.info("[throttle] #{key} over limit, retry in #{retry_after}s")
    body = { error: "rate_limited", retry_after: retry_after }.to_json
    headers = {
      "Content-Type" => "application/json",
      "Retry-After" => retry_after.to_s
    }
    [429, headers, [body]]
  end
end
'''

RATE_LIMITER = '''\
# frozen_string_literal: true

# Fixed-window request counter backed by Redis.
#
#   limiter = RateLimiter.new(limit: 100, window: 60)
#   limiter.allow?("account:42") # => true until the 101st call in a minute
#
# Counters live under "rl:<key>:<window number>" and expire with their window,
# so nothing needs cleaning up.
class RateLimiter
  attr_reader :limit, :window

  def initialize(limit:, window: 60, redis: REDIS_POOL)
    raise ArgumentError, "limit must be positive" unless limit.positive?

    @limit = limit
    @window = window
    @redis = redis
  end

  # Counts the request and says whether it is within the limit.
  def allow?(key)
    count = @redis.with do |conn|
      conn.multi do |tx|
        tx.incr(bucket(key))
        tx.expire(bucket(key), window)
      end.first
    end
    count <= limit
  end

  def remaining(key)
    used = @redis.with { |conn| conn.get(bucket(key)).to_i }
    [limit - used, 0].max
  end

  # Seconds until the current window ends.
  def retry_after(_key)
    window - (now % window)
  end

  def reset!(key)
    @redis.with { |conn| conn.del(bucket(key)) }
  end

  private

  def bucket(key)
    "rl:#{key}:#{now / window}"
  end

  def now
    Time.now.to_i
  end
end
'''

REDIS_INIT = '''\
# frozen_string_literal: true

# One connection pool for the whole app. Sidekiq has its own pool
# (config/initializers/sidekiq.rb); everything else goes through this one.
#
#   REDIS_POOL.with { |conn| conn.get("key") }
#
# REDIS_URL is set by the platform in staging and production; development
# and test fall back to a local server (test uses database 15 so a
# developer's data survives `bundle exec rspec`).
require "connection_pool"
require "redis"

redis_url = ENV.fetch("REDIS_URL") do
  Rails.env.test? ? "redis://localhost:6379/15" : "redis://localhost:6379/0"
end

pool_size = Integer(ENV.fetch("RAILS_MAX_THREADS", 5))

REDIS_POOL = ConnectionPool.new(size: pool_size, timeout: 1) do
  Redis.new(
    url: redis_url,
    connect_timeout: 0.5,
    read_timeout: 0.5,
    write_timeout: 0.5,
    reconnect_attempts: 1
  )
end

# Legacy callers still use Redis.current; keep it pointing at a pooled
# connection until they are moved to REDIS_POOL (see SHOP-412).
Redis.singleton_class.class_eval do
  def current
    REDIS_POOL.with { |conn| conn }
  end
end

Rails.application.config.after_initialize do
  REDIS_POOL.with(&:ping) unless Rails.env.test?
rescue Redis::CannotConnectError => e
  Rails.logger.warn("[redis] not reachable at boot: #{e.message}")
end
'''

APPLICATION = '''\
# frozen_string_literal: true

require_relative "boot"

require "rails"
require "active_model/railtie"
require "active_job/railtie"
require "active_record/railtie"
require "action_controller/railtie"
require "action_mailer/railtie"

Bundler.require(*Rails.groups)

module ShopApi
  class Application < Rails::Application
    config.load_defaults 7.1
    config.api_only = true

    config.autoload_lib(ignore: %w[assets tasks])
    config.eager_load_paths << Rails.root.join("app/middleware")

    config.time_zone = "UTC"
    config.active_job.queue_adapter = :sidekiq
    config.active_record.schema_format = :ruby

    # Throttle before anything expensive happens (authentication, routing).
    config.middleware.insert_before Rack::Runtime, RequestThrottle

    config.generators do |g|
      g.test_framework :rspec
      g.factory_bot dir: "spec/factories"
      g.orm :active_record, primary_key_type: :bigint
    end

    config.x.inventory.base_url = ENV.fetch("INVENTORY_URL", "http://localhost:4010")
    config.x.inventory.timeout = 5
  end
end
'''

ROUTES = '''\
# frozen_string_literal: true

Rails.application.routes.draw do
  get "up" => "rails/health#show", as: :rails_health_check

  namespace :api do
    namespace :v1 do
      resource :session, only: %i[create destroy]
      resource :account, only: %i[show update] do
        get :usage
      end

      resources :users, only: %i[index show create update] do
        post :invite, on: :collection
      end

      resources :products, only: %i[index show] do
        get :search, on: :collection
      end

      resources :orders, only: %i[index show create update destroy] do
        member do
          post :cancel
          post :refund
        end
        resources :line_items, only: %i[index create destroy]
      end

      resources :invoices, only: %i[index show] do
        get :pdf, on: :member
      end

      resources :webhooks, only: %i[index create destroy]
    end
  end

  namespace :internal do
    post "inventory/sync" => "inventory#sync"
    get "metrics" => "metrics#show"
  end

  match "*path", to: "api/v1/base#not_found", via: :all
end
'''

BASE_CONTROLLER = '''\
# frozen_string_literal: true

module Api
  module V1
    class BaseController < ActionController::API
      include Pagy::Backend

      before_action :authenticate_user!

      rescue_from ActiveRecord::RecordNotFound, with: :not_found
      rescue_from ActionController::ParameterMissing, with: :bad_request
      rescue_from Pundit::NotAuthorizedError, with: :forbidden

      attr_reader :current_user

      def not_found(_error = nil)
        render json: { error: "not_found" }, status: :not_found
      end

      private

      def authenticate_user!
        token = request.authorization.to_s.delete_prefix("Bearer ")
        @current_user = User.authenticate_token(token)
        render json: { error: "unauthorized" }, status: :unauthorized unless @current_user
      end

      def current_account
        current_user&.account
      end

      def bad_request(error)
        render json: { error: "bad_request", message: error.message }, status: :bad_request
      end

      def forbidden(_error)
        render json: { error: "forbidden" }, status: :forbidden
      end

      def render_errors(record)
        render json: { errors: record.errors.to_hash(true) }, status: :unprocessable_entity
      end

      def pagination_meta(pagy)
        { page: pagy.page, per_page: pagy.limit, total: pagy.count, pages: pagy.pages }
      end
    end
  end
end
'''

ORDERS_CONTROLLER = '''\
# frozen_string_literal: true

module Api
  module V1
    class OrdersController < BaseController
      before_action :load_order, only: %i[show update destroy cancel refund]

      def index
        orders = policy_scope(current_account.orders)
                 .includes(:line_items)
                 .order(created_at: :desc)
        orders = orders.where(status: params[:status]) if params[:status].present?
        pagy, page = pagy(orders, limit: per_page)
        render json: {
          orders: OrderSerializer.new(page).serializable_hash,
          meta: pagination_meta(pagy)
        }
      end

      def show
        authorize @order
        render json: OrderSerializer.new(@order, include: [:line_items]).serializable_hash
      end

      def create
        order = current_account.orders.build(order_params.merge(placed_by: current_user))
        authorize order
        if order.save
          SyncInventoryJob.perform_later(current_account.id, order.id)
          render json: OrderSerializer.new(order).serializable_hash, status: :created
        else
          render_errors(order)
        end
      end

      def update
        authorize @order
        if @order.update(order_params)
          render json: OrderSerializer.new(@order).serializable_hash
        else
          render_errors(@order)
        end
      end

      def destroy
        authorize @order
        @order.discard
        head :no_content
      end

      def cancel
        authorize @order
        if @order.cancel!(by: current_user)
          render json: OrderSerializer.new(@order).serializable_hash
        else
          render json: { error: "not_cancellable", status: @order.status }, status: :conflict
        end
      end

      def refund
        authorize @order
        refund = Billing::Refund.call(order: @order, amount_cents: params.require(:amount_cents).to_i)
        if refund.success?
          render json: OrderSerializer.new(@order.reload).serializable_hash
        else
          render json: { error: refund.error }, status: :unprocessable_entity
        end
      end

      private

      def load_order
        @order = current_account.orders.kept.find(params[:id])
      end

      def order_params
        params.require(:order).permit(
          :currency, :notes, :shipping_address_id,
          line_items_attributes: %i[id sku quantity unit_price_cents _destroy]
        )
      end

      def per_page
        params.fetch(:per_page, 25).to_i.clamp(1, 100)
      end
    end
  end
end
'''

ACCOUNT = '''\
# frozen_string_literal: true

class Account < ApplicationRecord
  PLANS = %w[free pro enterprise].freeze

  has_many :users, dependent: :destroy
  has_many :orders, dependent: :destroy
  has_many :invoices, dependent: :destroy
  has_many :webhooks, dependent: :destroy
  has_one :billing_profile, dependent: :destroy

  validates :name, presence: true, length: { maximum: 120 }
  validates :plan, inclusion: { in: PLANS }
  validates :slug, presence: true, uniqueness: true,
                   format: { with: /\\A[a-z0-9-]+\\z/ }

  before_validation :generate_slug, on: :create

  scope :active, -> { where(suspended_at: nil) }
  scope :on_plan, ->(plan) { where(plan: plan) }
  scope :syncing_inventory, -> { active.where(inventory_sync_enabled: true) }

  def suspended?
    suspended_at.present?
  end

  def suspend!(reason:)
    update!(suspended_at: Time.current, suspension_reason: reason)
  end

  def free?
    plan == "free"
  end

  def monthly_order_count
    orders.where(created_at: Time.current.all_month).count
  end

  def owner
    users.find_by(role: "owner")
  end

  private

  def generate_slug
    return if slug.present? || name.blank?

    base = name.parameterize
    self.slug = Account.exists?(slug: base) ? "#{base}-#{SecureRandom.hex(2)}" : base
  end
end
'''

USER = '''\
# frozen_string_literal: true

class User < ApplicationRecord
  ROLES = %w[owner admin member].freeze

  belongs_to :account
  has_many :orders, foreign_key: :placed_by_id, inverse_of: :placed_by, dependent: :nullify
  has_many :api_tokens, dependent: :destroy

  has_secure_password

  validates :email, presence: true, uniqueness: { case_sensitive: false }
  validates :role, inclusion: { in: ROLES }

  normalizes :email, with: ->(email) { email.strip.downcase }

  scope :admins, -> { where(role: %w[owner admin]) }

  def self.authenticate_token(token)
    return if token.blank?

    ApiToken.active.find_by(digest: ApiToken.digest(token))&.tap(&:touch_last_used)&.user
  end

  def admin?
    role.in?(%w[owner admin])
  end

  def display_name
    name.presence || email.split("@").first
  end

  def invite!(by:)
    update!(invited_by_id: by.id, invited_at: Time.current)
    UserMailer.invitation(self).deliver_later
  end
end
'''

ORDER = '''\
# frozen_string_literal: true

class Order < ApplicationRecord
  include Discard::Model

  STATUSES = %w[draft placed paid shipped delivered cancelled refunded].freeze
  CANCELLABLE = %w[draft placed paid].freeze
  CURRENCIES = %w[EUR USD GBP].freeze

  belongs_to :account
  belongs_to :placed_by, class_name: "User", optional: true
  belongs_to :shipping_address, class_name: "Address", optional: true
  has_many :line_items, -> { order(:position) }, dependent: :destroy, inverse_of: :order
  has_many :refunds, class_name: "Billing::Refund", dependent: :restrict_with_error
  has_one :invoice, dependent: :nullify

  accepts_nested_attributes_for :line_items, allow_destroy: true

  validates :status, inclusion: { in: STATUSES }
  validates :currency, inclusion: { in: CURRENCIES }
  validates :number, presence: true, uniqueness: { scope: :account_id }
  validate :line_items_present, unless: :draft?
  validate :same_currency_as_account, on: :create

  before_validation :assign_number, on: :create
  before_save :recalculate_totals

  scope :open, -> { where(status: %w[draft placed paid]) }
  scope :recent, -> { where(created_at: 30.days.ago..) }
  scope :for_month, ->(date) { where(created_at: date.all_month) }

  delegate :name, to: :account, prefix: true

  STATUSES.each do |name|
    define_method(:"#{name}?") { status == name }
  end

  def cancel!(by:)
    return false unless CANCELLABLE.include?(status)

    transaction do
      update!(status: "cancelled", cancelled_at: Time.current, cancelled_by_id: by.id)
      line_items.each(&:release_stock!)
    end
    OrderMailer.cancelled(self).deliver_later
    true
  end

  def place!
    raise InvalidTransition, "order #{number} is #{status}" unless draft?

    update!(status: "placed", placed_at: Time.current)
  end

  def mark_paid!(payment_reference)
    update!(status: "paid", paid_at: Time.current, payment_reference: payment_reference)
  end

  def refundable_cents
    total_cents - refunds.sum(:amount_cents)
  end

  def item_count
    line_items.sum(:quantity)
  end

  def total
    Money.new(total_cents, currency)
  end

  def to_param
    number
  end

  class InvalidTransition < StandardError; end

  private

  def assign_number
    return if number.present?

    seq = account.orders.maximum(:sequence).to_i + 1
    self.sequence = seq
    self.number = format("%<slug>s-%<seq>06d", slug: account.slug.upcase.first(4), seq: seq)
  end

  def recalculate_totals
    self.subtotal_cents = line_items.reject(&:marked_for_destruction?).sum(&:total_cents)
    self.tax_cents = TaxCalculator.new(account: account).tax_for(subtotal_cents, currency)
    self.total_cents = subtotal_cents + tax_cents + shipping_cents.to_i
  end

  def line_items_present
    errors.add(:line_items, :blank) if line_items.reject(&:marked_for_destruction?).empty?
  end

  def same_currency_as_account
    return if account.nil? || account.currency.blank? || account.currency == currency

    errors.add(:currency, :mismatch, expected: account.currency)
  end
end
'''

SYNC_JOB = '''\
# frozen_string_literal: true

# Pushes stock changes for an account's orders to the inventory service.
class SyncInventoryJob < ApplicationJob
  queue_as :inventory

  retry_on Inventory::Client::Unavailable, wait: :polynomially_longer, attempts: 8
  discard_on ActiveRecord::RecordNotFound

  def perform(account_id, order_id = nil)
    account = Account.find(account_id)
    return unless account.inventory_sync_enabled?

    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    items = pending_items(account, order_id)
    return if items.empty?

    client = Inventory::Client.new(
      base_url: Rails.configuration.x.inventory.base_url,
      timeout: Rails.configuration.x.inventory.timeout
    )
    items.each_slice(100) do |batch|
      client.adjust_stock(batch.map { |item| { sku: item.sku, delta: -item.quantity } })
      LineItem.where(id: batch.map(&:id)).update_all(synced_at: Time.current)
    end

    elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    Rails.logger.info("[sync] account=#{account.id} #{items.size} items in #{elapsed.round(2)}s")
  end

  private

  def pending_items(account, order_id)
    scope = LineItem.joins(:order).where(orders: { account_id: account.id }, synced_at: nil)
    scope = scope.where(order_id: order_id) if order_id
    scope.to_a
  end
end
'''

RATE_LIMITER_SPEC = '''\
# frozen_string_literal: true

require "rails_helper"

RSpec.describe RateLimiter do
  subject(:limiter) { described_class.new(limit: 3, window: 60, redis: pool) }

  let(:redis) { MockRedis.new }
  let(:pool) { ConnectionPool.new(size: 1) { redis } }

  around do |example|
    travel_to(Time.zone.parse("2026-03-02 10:00:05")) { example.run }
  end

  describe "#initialize" do
    it "rejects a zero limit" do
      expect { described_class.new(limit: 0, redis: pool) }.to raise_error(ArgumentError)
    end
  end

  describe "#allow?" do
    it "allows requests under the limit" do
      3.times { expect(limiter.allow?("ip:1.2.3.4")).to be(true) }
    end

    it "refuses the request over the limit" do
      3.times { limiter.allow?("ip:1.2.3.4") }
      expect(limiter.allow?("ip:1.2.3.4")).to be(false)
    end

    it "counts keys separately" do
      3.times { limiter.allow?("ip:1.2.3.4") }
      expect(limiter.allow?("ip:5.6.7.8")).to be(true)
    end

    it "starts again in the next window" do
      3.times { limiter.allow?("ip:1.2.3.4") }
      travel 60.seconds
      expect(limiter.allow?("ip:1.2.3.4")).to be(true)
    end

    it "sets an expiry on the bucket" do
      limiter.allow?("ip:1.2.3.4")
      expect(redis.ttl("rl:ip:1.2.3.4:#{Time.now.to_i / 60}")).to be_between(1, 60)
    end
  end

  describe "#remaining" do
    it "is the limit before any request" do
      expect(limiter.remaining("ip:1.2.3.4")).to eq(3)
    end

    it "never goes below zero" do
      5.times { limiter.allow?("ip:1.2.3.4") }
      expect(limiter.remaining("ip:1.2.3.4")).to eq(0)
    end
  end

  describe "#retry_after" do
    it "is the time left in the window" do
      expect(limiter.retry_after("ip:1.2.3.4")).to eq(55)
    end
  end

  describe "#reset!" do
    it "clears the count" do
      3.times { limiter.allow?("ip:1.2.3.4") }
      limiter.reset!("ip:1.2.3.4")
      expect(limiter.allow?("ip:1.2.3.4")).to be(true)
    end
  end
end
'''

THROTTLE_SPEC = '''\
# frozen_string_literal: true

require "rails_helper"

RSpec.describe RequestThrottle do
  subject(:middleware) { described_class.new(app, limiter: limiter, logger: logger) }

  let(:app) { ->(_env) { [200, { "Content-Type" => "application/json" }, ["{}"]] } }
  let(:limiter) { RateLimiter.new(limit: 2, window: 60, redis: ConnectionPool.new(size: 1) { MockRedis.new }) }
  let(:logger) { instance_double(Logger, info: nil) }

  def request(path = "/api/v1/orders", ip: "10.0.0.1", headers: {})
    env = Rack::MockRequest.env_for(path, "REMOTE_ADDR" => ip, **headers)
    middleware.call(env)
  end

  it "passes requests under the limit through" do
    status, headers, = request
    expect(status).to eq(200)
    expect(headers["X-RateLimit-Remaining"]).to eq("1")
  end

  it "answers 429 with Retry-After over the limit" do
    2.times { request }
    status, headers, body = request
    expect(status).to eq(429)
    expect(headers["Retry-After"]).to match(/\\A\\d+\\z/)
    expect(JSON.parse(body.first)).to include("error" => "rate_limited")
  end

  it "counts each address separately" do
    2.times { request(ip: "10.0.0.1") }
    status, = request(ip: "10.0.0.2")
    expect(status).to eq(200)
  end

  it "does not throttle paths outside /api" do
    3.times { request("/up") }
    status, = request("/up")
    expect(status).to eq(200)
  end

  it "logs throttled requests" do
    3.times { request }
    expect(logger).to have_received(:info).with(/\\[throttle\\] ip:10.0.0.1 over limit/)
  end
end
'''


def _orders_request_spec() -> str:
    # A long request spec, as real ones are: one block per endpoint.
    head = '''\
# frozen_string_literal: true

require "rails_helper"

RSpec.describe "Api::V1::Orders" do
  let(:account) { create(:account, plan: "pro") }
  let(:user) { create(:user, account: account) }
  let(:headers) { auth_headers_for(user) }
  let(:json) { JSON.parse(response.body) }

  before { Redis.current.flushdb }
'''
    blocks = []
    for verb, path, name, status, setup, check in _ORDER_EXAMPLES:
        blocks.append(f'''
  describe "{verb.upper()} {path}" do
    it "{name}" do
{setup}
      {verb} "{path.replace(':id', '#{order.number}')}", headers: headers{', params: params, as: :json' if verb in ('post', 'patch') else ''}

      expect(response).to have_http_status(:{status})
{check}
    end
  end
''')
    tail = '''
  describe "throttling" do
    it "answers 429 once the account is over its limit" do
      stub_const("RequestThrottle::DEFAULT_LIMIT", 2)
      3.times { get "/api/v1/orders", headers: headers }

      expect(response).to have_http_status(:too_many_requests)
      expect(response.headers["Retry-After"]).to be_present
    end
  end
end
'''
    return head + "".join(blocks) + tail


_ORDER_EXAMPLES = [
    ("get", "/api/v1/orders", "lists the account's orders, newest first",
     "ok", "      old = create(:order, account: account, created_at: 2.days.ago)\n"
           "      new = create(:order, account: account)",
     '      expect(json["orders"]["data"].pluck("id")).to eq([new.id.to_s, old.id.to_s])'),
    ("get", "/api/v1/orders", "does not list other accounts' orders",
     "ok", "      create(:order)",
     '      expect(json["orders"]["data"]).to be_empty'),
    ("get", "/api/v1/orders", "paginates with per_page",
     "ok", "      create_list(:order, 3, account: account)\n      get \"/api/v1/orders?per_page=2\", headers: headers",
     '      expect(json["meta"]).to include("per_page" => 25, "total" => 3)'),
    ("get", "/api/v1/orders/:id", "shows an order with its line items",
     "ok", "      order = create(:order, :with_line_items, account: account)",
     '      expect(json["data"]["relationships"]["line_items"]["data"].size).to eq(order.line_items.size)'),
    ("get", "/api/v1/orders/:id", "is 404 for another account's order",
     "not_found", "      order = create(:order)",
     '      expect(json).to eq("error" => "not_found")'),
    ("post", "/api/v1/orders", "creates an order and queues the inventory sync",
     "created", "      params = { order: { currency: \"EUR\", line_items_attributes: [{ sku: \"TEA-01\", quantity: 2 }] } }",
     '      expect(SyncInventoryJob).to have_been_enqueued.with(account.id, Order.last.id)'),
    ("post", "/api/v1/orders", "rejects an order without line items",
     "unprocessable_entity", "      params = { order: { currency: \"EUR\", line_items_attributes: [] } }",
     '      expect(json["errors"]).to have_key("line_items")'),
    ("post", "/api/v1/orders", "rejects a currency the account does not use",
     "unprocessable_entity", "      params = { order: { currency: \"GBP\", line_items_attributes: [{ sku: \"TEA-01\", quantity: 1 }] } }",
     '      expect(json["errors"]["currency"]).to be_present'),
    ("patch", "/api/v1/orders/:id", "updates the notes",
     "ok", "      order = create(:order, account: account)\n      params = { order: { notes: \"Leave at the door\" } }",
     '      expect(order.reload.notes).to eq("Leave at the door")'),
    ("delete", "/api/v1/orders/:id", "discards the order",
     "no_content", "      order = create(:order, account: account)",
     '      expect(order.reload).to be_discarded'),
    ("post", "/api/v1/orders/:id/cancel", "cancels a placed order",
     "ok", "      order = create(:order, :placed, account: account)\n      params = {}",
     '      expect(order.reload).to be_cancelled'),
    ("post", "/api/v1/orders/:id/cancel", "refuses to cancel a shipped order",
     "conflict", "      order = create(:order, :shipped, account: account)\n      params = {}",
     '      expect(json).to include("error" => "not_cancellable", "status" => "shipped")'),
    ("post", "/api/v1/orders/:id/refund", "refunds part of a paid order",
     "ok", "      order = create(:order, :paid, account: account, total_cents: 5_000)\n"
           "      params = { amount_cents: 1_500 }",
     '      expect(order.reload.refundable_cents).to eq(3_500)'),
    ("post", "/api/v1/orders/:id/refund", "refuses a refund larger than the order",
     "unprocessable_entity", "      order = create(:order, :paid, account: account, total_cents: 5_000)\n"
                             "      params = { amount_cents: 9_000 }",
     '      expect(json["error"]).to eq("amount_exceeds_refundable")'),
]

_TABLES = [
    ("accounts", [("string", "name", "null: false"), ("string", "slug", "null: false"),
                  ("string", "plan", 'default: "free", null: false'), ("string", "currency", 'default: "EUR"'),
                  ("boolean", "inventory_sync_enabled", "default: false, null: false"),
                  ("datetime", "suspended_at", ""), ("string", "suspension_reason", "")],
     [("slug", "unique: true"), ("plan", "")]),
    ("addresses", [("bigint", "account_id", "null: false"), ("string", "line1", "null: false"),
                   ("string", "line2", ""), ("string", "city", "null: false"), ("string", "postcode", "null: false"),
                   ("string", "country", "limit: 2, null: false")], [("account_id", "")]),
    ("api_tokens", [("bigint", "user_id", "null: false"), ("string", "digest", "null: false"),
                    ("datetime", "last_used_at", ""), ("datetime", "revoked_at", ""), ("datetime", "expires_at", "")],
     [("digest", "unique: true"), ("user_id", "")]),
    ("billing_profiles", [("bigint", "account_id", "null: false"), ("string", "vat_number", ""),
                          ("string", "stripe_customer_id", ""), ("string", "billing_email", "")],
     [("account_id", "unique: true")]),
    ("invoices", [("bigint", "account_id", "null: false"), ("bigint", "order_id", ""),
                  ("string", "number", "null: false"), ("integer", "total_cents", "default: 0, null: false"),
                  ("string", "currency", "null: false"), ("datetime", "issued_at", ""), ("datetime", "paid_at", "")],
     [("account_id", ""), ("number", "unique: true")]),
    ("line_items", [("bigint", "order_id", "null: false"), ("string", "sku", "null: false"),
                    ("integer", "quantity", "default: 1, null: false"), ("integer", "unit_price_cents", "null: false"),
                    ("integer", "total_cents", "null: false"), ("integer", "position", ""),
                    ("datetime", "synced_at", "")], [("order_id", ""), ("sku", "")]),
    ("orders", [("bigint", "account_id", "null: false"), ("bigint", "placed_by_id", ""),
                ("bigint", "shipping_address_id", ""), ("string", "number", "null: false"),
                ("integer", "sequence", "null: false"), ("string", "status", 'default: "draft", null: false'),
                ("string", "currency", "null: false"), ("integer", "subtotal_cents", "default: 0, null: false"),
                ("integer", "tax_cents", "default: 0, null: false"), ("integer", "shipping_cents", "default: 0"),
                ("integer", "total_cents", "default: 0, null: false"), ("text", "notes", ""),
                ("string", "payment_reference", ""), ("datetime", "placed_at", ""), ("datetime", "paid_at", ""),
                ("datetime", "cancelled_at", ""), ("bigint", "cancelled_by_id", ""), ("datetime", "discarded_at", "")],
     [("account_id, number", "unique: true"), ("account_id, status", ""), ("discarded_at", "")]),
    ("products", [("bigint", "account_id", "null: false"), ("string", "sku", "null: false"),
                  ("string", "name", "null: false"), ("integer", "price_cents", "null: false"),
                  ("integer", "stock", "default: 0, null: false"), ("boolean", "active", "default: true")],
     [("account_id, sku", "unique: true")]),
    ("refunds", [("bigint", "order_id", "null: false"), ("integer", "amount_cents", "null: false"),
                 ("string", "reason", ""), ("string", "stripe_refund_id", "")], [("order_id", "")]),
    ("users", [("bigint", "account_id", "null: false"), ("string", "email", "null: false"),
               ("string", "name", ""), ("string", "password_digest", "null: false"),
               ("string", "role", 'default: "member", null: false'), ("bigint", "invited_by_id", ""),
               ("datetime", "invited_at", "")], [("account_id", ""), ("email", "unique: true")]),
    ("webhooks", [("bigint", "account_id", "null: false"), ("string", "url", "null: false"),
                  ("string", "events", "array: true, default: []"), ("string", "secret", "null: false"),
                  ("datetime", "last_failure_at", "")], [("account_id", "")]),
]

_TABLES += [
    ("audit_logs", [("bigint", "account_id", "null: false"), ("bigint", "user_id", ""), ("string", "action", "null: false"),
                    ("string", "subject_type", ""), ("bigint", "subject_id", ""), ("jsonb", "changes_made", 'default: {}'),
                    ("string", "ip_address", ""), ("string", "request_id", "")],
     [("account_id, created_at", ""), ("subject_type, subject_id", "")]),
    ("coupons", [("bigint", "account_id", "null: false"), ("string", "code", "null: false"),
                 ("integer", "percent_off", ""), ("integer", "amount_off_cents", ""), ("datetime", "starts_at", ""),
                 ("datetime", "ends_at", ""), ("integer", "max_redemptions", ""),
                 ("integer", "redemptions_count", "default: 0, null: false")], [("account_id, code", "unique: true")]),
    ("shipments", [("bigint", "order_id", "null: false"), ("string", "carrier", "null: false"),
                   ("string", "tracking_number", ""), ("string", "status", 'default: "pending", null: false'),
                   ("datetime", "shipped_at", ""), ("datetime", "delivered_at", ""), ("jsonb", "events", "default: []")],
     [("order_id", ""), ("tracking_number", "")]),
    ("stock_movements", [("bigint", "product_id", "null: false"), ("bigint", "line_item_id", ""),
                         ("integer", "delta", "null: false"), ("string", "reason", "null: false"),
                         ("string", "external_id", "")], [("product_id", ""), ("external_id", "unique: true")]),
    ("variants", [("bigint", "product_id", "null: false"), ("string", "sku", "null: false"),
                  ("string", "option1", ""), ("string", "option2", ""), ("integer", "price_cents", ""),
                  ("integer", "stock", "default: 0, null: false"), ("integer", "weight_grams", "")],
     [("product_id", ""), ("sku", "unique: true")]),
]
_TABLES.sort()


def _schema() -> str:
    out = ['# This file is auto-generated from the current state of the database. Instead',
           '# of editing this file, please use the migrations feature of Active Record to',
           '# incrementally modify your database, and then regenerate this schema definition.',
           '#',
           "# It's strongly recommended that you check this file into your version control system.",
           '',
           'ActiveRecord::Schema[7.1].define(version: 2026_01_12_093000) do',
           '  # These are extensions that must be enabled in order to support this database',
           '  enable_extension "plpgsql"',
           '']
    for table, cols, indexes in _TABLES:
        out.append(f'  create_table "{table}", force: :cascade do |t|')
        for kind, name, opts in cols:
            out.append(f'    t.{kind} "{name}"' + (f", {opts}" if opts else ""))
        out.append('    t.datetime "created_at", null: false')
        out.append('    t.datetime "updated_at", null: false')
        for cols_, opts in indexes:
            names = ", ".join(f'"{c.strip()}"' for c in cols_.split(","))
            iname = f"index_{table}_on_" + "_and_".join(c.strip() for c in cols_.split(","))
            out.append(f'    t.index [{names}], name: "{iname}"' + (f", {opts}" if opts else ""))
        out.append('  end')
        out.append('')
    for table, cols, _ in _TABLES:
        for kind, name, _opts in cols:
            if kind == "bigint" and name.endswith("_id"):
                target = {"placed_by_id": "users", "cancelled_by_id": "users", "invited_by_id": "users",
                          "shipping_address_id": "addresses"}.get(name, name[:-3] + "s")
                out.append(f'  add_foreign_key "{table}", "{target}"' +
                           (f', column: "{name}"' if target[:-1] + "_id" != name else ""))
    out.append('end')
    return "\n".join(out) + "\n"


FILES: dict[str, str] = {
    "app/middleware/request_throttle.rb": REQUEST_THROTTLE,
    "app/services/rate_limiter.rb": RATE_LIMITER,
    "config/initializers/redis.rb": REDIS_INIT,
    "config/application.rb": APPLICATION,
    "config/routes.rb": ROUTES,
    "app/controllers/api/v1/base_controller.rb": BASE_CONTROLLER,
    "app/controllers/api/v1/orders_controller.rb": ORDERS_CONTROLLER,
    "app/models/account.rb": ACCOUNT,
    "app/models/user.rb": USER,
    "app/models/order.rb": ORDER,
    "app/jobs/sync_inventory_job.rb": SYNC_JOB,
    "spec/services/rate_limiter_spec.rb": RATE_LIMITER_SPEC,
    "spec/middleware/request_throttle_spec.rb": THROTTLE_SPEC,
    "spec/requests/api/v1/orders_spec.rb": _orders_request_spec(),
    "db/schema.rb": _schema(),
}

# {path: its lines}, the form the tool results are cut from
LINES: dict[str, list[str]] = {path: text.splitlines() for path, text in FILES.items()}
PATHS: tuple[str, ...] = tuple(sorted(FILES))

# Gemfile.lock: (gem, version, its dependencies)
_GEMS = [
    ("actioncable", "7.1.3", ["actionpack (= 7.1.3)", "activesupport (= 7.1.3)", "nio4r (~> 2.0)", "websocket-driver (>= 0.6.1)", "zeitwerk (~> 2.6)"]),
    ("actionmailer", "7.1.3", ["actionpack (= 7.1.3)", "actionview (= 7.1.3)", "activejob (= 7.1.3)", "activesupport (= 7.1.3)", "mail (~> 2.5, >= 2.5.4)", "rails-dom-testing (~> 2.2)"]),
    ("actionpack", "7.1.3", ["actionview (= 7.1.3)", "activesupport (= 7.1.3)", "nokogiri (>= 1.8.5)", "racc", "rack (>= 2.2.4)", "rack-session (>= 1.0.1)", "rack-test (>= 0.6.3)", "rails-dom-testing (~> 2.2)", "rails-html-sanitizer (~> 1.6)"]),
    ("actionview", "7.1.3", ["activesupport (= 7.1.3)", "builder (~> 3.1)", "erubi (~> 1.11)", "rails-dom-testing (~> 2.2)", "rails-html-sanitizer (~> 1.6)"]),
    ("activejob", "7.1.3", ["activesupport (= 7.1.3)", "globalid (>= 0.3.6)"]),
    ("activemodel", "7.1.3", ["activesupport (= 7.1.3)"]),
    ("activerecord", "7.1.3", ["activemodel (= 7.1.3)", "activesupport (= 7.1.3)", "timeout (>= 0.4.0)"]),
    ("activesupport", "7.1.3", ["base64", "bigdecimal", "concurrent-ruby (~> 1.0, >= 1.0.2)", "connection_pool (>= 2.2.5)", "drb", "i18n (>= 1.6, < 2)", "minitest (>= 5.1)", "mutex_m", "tzinfo (~> 2.0)"]),
    ("ast", "2.4.2", []), ("base64", "0.2.0", []), ("bcrypt", "3.1.20", []), ("bigdecimal", "3.1.6", []),
    ("bootsnap", "1.18.3", ["msgpack (~> 1.2)"]), ("builder", "3.2.4", []), ("concurrent-ruby", "1.2.3", []),
    ("connection_pool", "2.4.1", []), ("crass", "1.0.6", []), ("date", "3.3.4", []),
    ("diff-lcs", "1.5.1", []), ("discard", "1.3.0", ["activerecord (>= 4.2, < 8)"]), ("drb", "2.2.0", ["ruby2_keywords"]),
    ("erubi", "1.12.0", []), ("factory_bot", "6.4.6", ["activesupport (>= 5.0.0)"]),
    ("factory_bot_rails", "6.4.3", ["factory_bot (~> 6.4)", "railties (>= 5.0.0)"]),
    ("faker", "3.2.3", ["i18n (>= 1.8.11, < 2)"]), ("globalid", "1.2.1", ["activesupport (>= 6.1)"]),
    ("i18n", "1.14.1", ["concurrent-ruby (~> 1.0)"]), ("io-console", "0.7.2", []),
    ("irb", "1.11.2", ["rdoc", "reline (>= 0.4.2)"]), ("jsonapi-serializer", "2.2.0", ["activesupport (>= 4.2)"]),
    ("loofah", "2.22.0", ["crass (~> 1.0.2)", "nokogiri (>= 1.12.0)"]),
    ("mail", "2.8.1", ["mini_mime (>= 0.1.1)", "net-imap", "net-pop", "net-smtp"]), ("mini_mime", "1.1.5", []),
    ("minitest", "5.22.2", []), ("mock_redis", "0.44.0", []), ("money", "6.19.0", ["i18n (>= 0.6.4, <= 2)"]),
    ("msgpack", "1.7.2", []), ("mutex_m", "0.2.0", []), ("net-imap", "0.4.10", ["date", "net-protocol"]),
    ("net-pop", "0.1.2", ["net-protocol"]), ("net-protocol", "0.2.2", ["timeout"]), ("net-smtp", "0.4.0.1", ["net-protocol"]),
    ("nio4r", "2.7.0", []), ("nokogiri", "1.16.2-x86_64-linux", ["racc (~> 1.4)"]), ("pagy", "7.0.9", []),
    ("parallel", "1.24.0", []), ("parser", "3.3.0.5", ["ast (~> 2.4.1)", "racc"]), ("pg", "1.5.5", []),
    ("psych", "5.1.2", ["stringio"]), ("puma", "6.4.2", ["nio4r (~> 2.0)"]), ("pundit", "2.3.1", ["activesupport (>= 3.0.0)"]),
    ("racc", "1.7.3", []), ("rack", "3.0.9", []), ("rack-session", "2.0.0", ["rack (>= 3.0.0)"]),
    ("rack-test", "2.1.0", ["rack (>= 1.3)"]), ("rackup", "2.1.0", ["rack (>= 3)", "webrick (~> 1.8)"]),
    ("rails-dom-testing", "2.2.0", ["activesupport (>= 5.0.0)", "minitest", "nokogiri (>= 1.6)"]),
    ("rails-html-sanitizer", "1.6.0", ["loofah (~> 2.21)", "nokogiri (~> 1.14)"]),
    ("railties", "7.1.3", ["actionpack (= 7.1.3)", "activesupport (= 7.1.3)", "irb", "rackup (>= 1.0.0)", "rake (>= 12.2)", "thor (~> 1.0, >= 1.2.2)", "zeitwerk (~> 2.6)"]),
    ("rainbow", "3.1.1", []), ("rake", "13.1.0", []), ("rdoc", "6.6.2", ["psych (>= 4.0.0)"]),
    ("redis", "5.1.0", ["redis-client (>= 0.17.0)"]), ("redis-client", "0.20.0", ["connection_pool"]),
    ("regexp_parser", "2.9.0", []), ("reline", "0.4.3", ["io-console (~> 0.5)"]),
    ("rspec-core", "3.13.0", ["rspec-support (~> 3.13.0)"]),
    ("rspec-expectations", "3.13.0", ["diff-lcs (>= 1.2.0, < 2.0)", "rspec-support (~> 3.13.0)"]),
    ("rspec-mocks", "3.13.0", ["diff-lcs (>= 1.2.0, < 2.0)", "rspec-support (~> 3.13.0)"]),
    ("rspec-rails", "6.1.1", ["actionpack (>= 6.1)", "activesupport (>= 6.1)", "railties (>= 6.1)", "rspec-core (~> 3.12)", "rspec-expectations (~> 3.12)", "rspec-mocks (~> 3.12)", "rspec-support (~> 3.12)"]),
    ("rspec-support", "3.13.1", []),
    ("rubocop", "1.60.2", ["json (~> 2.3)", "language_server-protocol (>= 3.17.0)", "parallel (~> 1.10)", "parser (>= 3.3.0.2)", "rainbow (>= 2.2.2, < 4.0)", "regexp_parser (>= 1.8, < 3.0)", "rexml (>= 3.2.5, < 4.0)", "rubocop-ast (>= 1.30.0, < 2.0)", "ruby-progressbar (~> 1.7)", "unicode-display_width (>= 2.4.0, < 3.0)"]),
    ("rubocop-ast", "1.30.0", ["parser (>= 3.2.1.0)"]), ("ruby-progressbar", "1.13.0", []), ("ruby2_keywords", "0.0.5", []),
    ("sidekiq", "7.2.2", ["concurrent-ruby (< 2)", "connection_pool (>= 2.3.0)", "rack (>= 2.2.4)", "redis-client (>= 0.19.0)"]),
    ("stringio", "3.1.0", []), ("thor", "1.3.0", []), ("timeout", "0.4.1", []),
    ("tzinfo", "2.0.6", ["concurrent-ruby (~> 1.0)"]), ("unicode-display_width", "2.5.0", []),
    ("webmock", "3.20.0", ["addressable (>= 2.8.0)", "crack (>= 0.3.2)", "hashdiff (>= 0.4.0, < 2.0.0)"]),
    ("webrick", "1.8.1", []), ("websocket-driver", "0.7.6", ["websocket-extensions (>= 0.1.0)"]),
    ("websocket-extensions", "0.1.5", []), ("zeitwerk", "2.6.13", []),
]
_DIRECT = ["bcrypt (~> 3.1)", "bootsnap", "connection_pool (~> 2.4)", "discard (~> 1.3)", "factory_bot_rails",
           "faker", "jsonapi-serializer", "mock_redis", "money (~> 6.19)", "pagy (~> 7.0)", "pg (~> 1.5)",
           "puma (>= 5.0)", "pundit (~> 2.3)", "rails (~> 7.1.3)", "redis (~> 5.1)", "rspec-rails (~> 6.1)",
           "rubocop", "sidekiq (~> 7.2)", "webmock"]


def _gemfile_lock() -> str:
    out = ["GEM", "  remote: https://rubygems.org/", "  specs:"]
    for name, version, deps in _GEMS:
        out.append(f"    {name} ({version})")
        out += [f"      {d}" for d in deps]
    out += ["", "PLATFORMS", "  x86_64-linux", "", "DEPENDENCIES"] + [f"  {d}" for d in _DIRECT]
    out += ["", "RUBY VERSION", "   ruby 3.3.0p0", "", "BUNDLED WITH", "   2.5.6"]
    return "\n".join(out) + "\n"


FILES["Gemfile.lock"] = _gemfile_lock()
LINES["Gemfile.lock"] = FILES["Gemfile.lock"].splitlines()
PATHS = tuple(sorted(FILES))

# The inventory service's answer that the SyncInventoryJob specs replay (a long, plain fixture)
_PRODUCTS = [
    ("TEA-01", "Sencha, 100 g"), ("TEA-02", "Genmaicha, 100 g"), ("TEA-03", "Assam breakfast, 250 g"),
    ("TEA-04", "Earl Grey, 250 g"), ("TEA-05", "Rooibos vanilla, 100 g"), ("TEA-06", "Darjeeling first flush, 50 g"),
    ("TEA-07", "Jasmine pearls, 50 g"), ("TEA-08", "Lapsang souchong, 100 g"), ("TEA-09", "Peppermint, 50 g"),
    ("TEA-10", "Chamomile, 50 g"), ("CUP-01", "Stoneware cup, white"), ("CUP-02", "Stoneware cup, slate"),
    ("CUP-03", "Glass cup, 200 ml"), ("POT-01", "Cast iron teapot, 0.8 l"), ("POT-02", "Glass teapot, 1 l"),
    ("POT-03", "Porcelain teapot, 0.5 l"), ("FLT-01", "Paper filters, 100 pcs"), ("FLT-02", "Steel infuser"),
    ("FLT-03", "Bamboo strainer"), ("ACC-01", "Tea caddy, 200 g"), ("ACC-02", "Bamboo scoop"),
    ("ACC-03", "Kettle thermometer"), ("ACC-04", "Tea towel, linen"), ("ACC-05", "Matcha whisk"),
    ("ACC-06", "Matcha bowl"), ("GFT-01", "Gift box, small"), ("GFT-02", "Gift box, large"),
    ("GFT-03", "Gift card, 25 EUR"), ("GFT-04", "Gift card, 50 EUR"), ("SUB-01", "Monthly tea box"),
    ("SUB-02", "Quarterly tea box"), ("KIT-01", "Starter kit"), ("KIT-02", "Office kit"),
    ("KIT-03", "Travel kit"), ("MAT-01", "Matcha ceremonial, 30 g"), ("MAT-02", "Matcha culinary, 100 g"),
]


def _inventory_fixture() -> str:
    out = ["{", '  "warehouse": "BER-1",', '  "generated_at": "2026-03-01T23:00:00Z",', '  "items": [']
    for i, (sku, name) in enumerate(_PRODUCTS):
        stock = (i * 37 + 11) % 240
        out += ["    {", f'      "sku": "{sku}",', f'      "name": "{name}",', f'      "on_hand": {stock},',
                f'      "reserved": {(i * 7) % 15},', f'      "available": {max(0, stock - (i * 7) % 15)},',
                f'      "reorder_point": {20 + (i % 4) * 10},', f'      "bin": "{"ABC"[i % 3]}-{i // 3 + 1:02d}",',
                f'      "updated_at": "2026-03-01T2{i % 3}:{(i * 13) % 60:02d}:00Z"',
                "    }" + ("," if i < len(_PRODUCTS) - 1 else "")]
    out += ["  ],", '  "next_page": null', "}"]
    return "\n".join(out) + "\n"


FILES["spec/fixtures/files/inventory/stock_levels.json"] = _inventory_fixture()
LINES["spec/fixtures/files/inventory/stock_levels.json"] = FILES["spec/fixtures/files/inventory/stock_levels.json"].splitlines()
PATHS = tuple(sorted(FILES))

# doc/openapi.yml: the API description (long, regular, as these files are)
_ENDPOINTS = [
    ("/api/v1/session", "post", "Sign in", "Session", "201"), ("/api/v1/session", "delete", "Sign out", None, "204"),
    ("/api/v1/account", "get", "Show the current account", "Account", "200"),
    ("/api/v1/account", "patch", "Update the current account", "Account", "200"),
    ("/api/v1/account/usage", "get", "Requests and orders used this month", "Usage", "200"),
    ("/api/v1/users", "get", "List the account's users", "UserList", "200"),
    ("/api/v1/users", "post", "Create a user", "User", "201"),
    ("/api/v1/users/{id}", "get", "Show a user", "User", "200"),
    ("/api/v1/users/invite", "post", "Invite a user by email", "User", "202"),
    ("/api/v1/products", "get", "List products", "ProductList", "200"),
    ("/api/v1/products/search", "get", "Search products by name or SKU", "ProductList", "200"),
    ("/api/v1/orders", "get", "List orders, newest first", "OrderList", "200"),
    ("/api/v1/orders", "post", "Create an order", "Order", "201"),
    ("/api/v1/orders/{id}", "get", "Show an order with its line items", "Order", "200"),
    ("/api/v1/orders/{id}", "patch", "Update an order", "Order", "200"),
    ("/api/v1/orders/{id}", "delete", "Discard an order", None, "204"),
    ("/api/v1/orders/{id}/cancel", "post", "Cancel an order", "Order", "200"),
    ("/api/v1/orders/{id}/refund", "post", "Refund part of a paid order", "Order", "200"),
    ("/api/v1/invoices", "get", "List invoices", "InvoiceList", "200"),
    ("/api/v1/invoices/{id}/pdf", "get", "Download an invoice as PDF", None, "200"),
    ("/api/v1/webhooks", "get", "List webhooks", "WebhookList", "200"),
    ("/api/v1/webhooks", "post", "Register a webhook", "Webhook", "201"),
]


def _openapi() -> str:
    out = ["openapi: 3.0.3", "info:", "  title: Shop API", "  version: 1.14.0", "  description: |",
           "    Orders, products and invoices for shop accounts. Every endpoint needs a bearer token.",
           "    Requests are limited per client; over the limit the API answers 429 with Retry-After.",
           "servers:", "  - url: https://api.shop.example/", "security:", "  - bearerAuth: []", "paths:"]
    last = None
    for path, verb, summary, schema, status in _ENDPOINTS:
        if path != last:
            out.append(f"  {path}:")
            last = path
        op = summary.split(",")[0].lower().replace(" ", "_").replace("'", "")
        out += [f"    {verb}:", f"      operationId: {op}", f"      summary: {summary}",
                f"      tags: [{path.split('/')[3]}]"]
        if "{id}" in path:
            out += ["      parameters:", "        - name: id", "          in: path", "          required: true",
                    "          schema: { type: string }"]
        out += ["      responses:", f'        "{status}":', f"          description: {summary}"]
        if schema:
            out += ["          content:", "            application/json:",
                    f"              schema: {{ $ref: '#/components/schemas/{schema}' }}"]
        out += ['        "401": { $ref: "#/components/responses/Unauthorized" }',
                '        "429": { $ref: "#/components/responses/TooManyRequests" }']
    out += ["components:", "  securitySchemes:", "    bearerAuth:", "      type: http", "      scheme: bearer",
            "  responses:", "    Unauthorized:", "      description: Missing or invalid token",
            "    TooManyRequests:", "      description: Over the rate limit", "      headers:", "        Retry-After:",
            "          description: Seconds until the window resets", "          schema: { type: integer }",
            "  schemas:"]
    for schema in sorted({e[3] for e in _ENDPOINTS if e[3]}):
        out += [f"    {schema}:", "      type: object"]
        if schema.endswith("List"):
            out += ["      properties:", "        data:", "          type: array",
                    f"          items: {{ $ref: '#/components/schemas/{schema[:-4]}' }}",
                    "        meta: { $ref: '#/components/schemas/Pagination' }"]
        else:
            out += ["      properties:", "        id: { type: string }", "        created_at: { type: string, format: date-time }"]
    out += ["    Pagination:", "      type: object", "      properties:", "        page: { type: integer }",
            "        per_page: { type: integer }", "        total: { type: integer }"]
    return "\n".join(out) + "\n"


FILES["doc/openapi.yml"] = _openapi()
LINES["doc/openapi.yml"] = FILES["doc/openapi.yml"].splitlines()
PATHS = tuple(sorted(FILES))
