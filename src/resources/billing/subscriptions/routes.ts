import { route } from '../../../kernel/route';
import { ITEM_OBJECT, SUBSCRIPTION_OBJECT } from './serializer';
import {
  cancelSubscription,
  createItem,
  createSubscription,
  deleteItem,
  listItems,
  listSubscriptions,
  resumeSubscription,
  retrieveItem,
  retrieveSubscription,
  searchSubscriptions,
  updateItem,
  updateSubscription,
} from './service';
import { deleteSubscriptionDiscount } from './discounts';

const sub = { object: SUBSCRIPTION_OBJECT };
const item = { object: ITEM_OBJECT };

export const routes = [
  route('get', '/v1/subscriptions', 'GetSubscriptions', { ...sub, list: true }, listSubscriptions),
  route('post', '/v1/subscriptions', 'PostSubscriptions', sub, createSubscription),
  route('get', '/v1/subscriptions/search', 'GetSubscriptionsSearch', { ...sub, search: true }, searchSubscriptions),
  route('get', '/v1/subscriptions/{subscription_exposed_id}', 'GetSubscriptionsSubscriptionExposedId', sub, retrieveSubscription),
  route('post', '/v1/subscriptions/{subscription_exposed_id}', 'PostSubscriptionsSubscriptionExposedId', sub, updateSubscription),
  route('delete', '/v1/subscriptions/{subscription_exposed_id}', 'DeleteSubscriptionsSubscriptionExposedId', sub, cancelSubscription),
  route('delete', '/v1/subscriptions/{subscription_exposed_id}/discount', 'DeleteSubscriptionsSubscriptionExposedIdDiscount', { object: 'discount' }, deleteSubscriptionDiscount),
  route('post', '/v1/subscriptions/{subscription}/resume', 'PostSubscriptionsSubscriptionResume', sub, resumeSubscription),
  route('get', '/v1/subscription_items', 'GetSubscriptionItems', { ...item, list: true }, listItems),
  route('post', '/v1/subscription_items', 'PostSubscriptionItems', item, createItem),
  route('get', '/v1/subscription_items/{item}', 'GetSubscriptionItemsItem', item, retrieveItem),
  route('post', '/v1/subscription_items/{item}', 'PostSubscriptionItemsItem', item, updateItem),
  route('delete', '/v1/subscription_items/{item}', 'DeleteSubscriptionItemsItem', item, deleteItem),
];
